/// Key frames of the start-code based picture layers of MPEG-4 Visual and H.263, whose
/// samples hold one picture each (with headers before it).
enum StartCodes {
    /// MPEG-4 Visual (ISO/IEC 14496-2 § 6.2.5): the first VOP (start code `00 00 01 B6`)
    /// decides by its vop_coding_type, the 2 bits after the start code: 0 is an I-VOP, key;
    /// P, B and S (sprite) VOPs are not. Visual object sequence, VOL and GOV headers may come
    /// first. nil when no VOP starts within ``Limits/keyFrameProbeScanBytes``.
    static func mpeg4VisualIsKeyFrame(_ sample: ArraySlice<UInt8>) -> Bool? {
        var from = sample.startIndex
        for _ in 0..<Limits.keyFrameProbeUnits {
            guard let code = Bitstream.nextStartCode(in: sample, from: from, limit: Limits.keyFrameProbeScanBytes),
                  code < sample.endIndex else { return nil }
            if sample[code] == 0xB6 {
                guard code + 1 < sample.endIndex else { return nil }
                return sample[code + 1] >> 6 == 0
            }
            from = code
        }
        return nil
    }

    /// H.263 (ITU-T H.263 § 5.1): the picture start code is 22 bits `0000 0000 0000 0000
    /// 1000 00`, byte aligned (§ 5.1.1); then TR (8 bits) and PTYPE (§ 5.1.3): a 1, a 0,
    /// split screen, document camera, freeze release, then the 3-bit source format. For
    /// formats 1...5, bit 9 is the picture coding type: 0 INTRA (key), 1 INTER. Format 7
    /// announces PLUSPTYPE (§ 5.1.4): UFEP (3 bits), when 1 the 18-bit OPPTYPE (its bit 15
    /// a 1), then MPPTYPE, whose first 3 bits are the picture type: 000 I (key); P,
    /// improved PB, B, EI and EP are not. nil for a forbidden or reserved code, or when
    /// no picture start code is found at a byte within ``Limits/keyFrameProbeScanBytes``.
    static func h263IsKeyFrame(_ sample: ArraySlice<UInt8>) -> Bool? {
        let end = sample.count > Limits.keyFrameProbeScanBytes
            ? sample.startIndex + Limits.keyFrameProbeScanBytes : sample.endIndex
        var index = sample.startIndex
        while end - index > 2 {
            if sample[index] == 0, sample[index + 1] == 0, sample[index + 2] & 0xFC == 0x80 {
                return h263PictureIsIntra(BitReader(sample[index...]))
            }
            index += 1
        }
        return nil
    }

    private static func h263PictureIsIntra(_ start: BitReader) -> Bool? {
        var bits = start
        guard bits.skip(22 + 8),  // PSC, TR
              bits.bit() == 1, bits.bit() == 0,  // PTYPE bits 1-2
              bits.skip(3),  // split screen, document camera, freeze picture release
              let format = bits.bits(3) else { return nil }
        switch format {
        case 1...5:
            guard let codingType = bits.bit() else { return nil }
            return codingType == 0
        case 7:
            guard let ufep = bits.bits(3) else { return nil }
            if ufep == 1 {
                // OPPTYPE: source format (3), 11 option bits, a 1, three 0s.
                guard bits.skip(14), bits.bit() == 1, bits.bits(3) == 0 else { return nil }
            } else if ufep != 0 {
                return nil
            }
            // MPPTYPE: picture type (3), RPR, RRU, rounding type, two 0s, a 1.
            guard let pictureType = bits.bits(3), bits.skip(3), bits.bits(2) == 0, bits.bit() == 1,
                  pictureType <= 5 else { return nil }
            return pictureType == 0
        default:
            return nil  // 0 forbidden, 6 reserved
        }
    }
}
