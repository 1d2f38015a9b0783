/// Key frames of VC-1 advanced profile (SMPTE 421M), whose samples are start-code
/// delimited (Annex E): an optional sequence header (`00 00 01 0F`) and entry point
/// (`00 00 01 0E`), then the frame (`00 00 01 0D`); or, as FFmpeg also accepts, the frame
/// layer alone without a start code. Simple and main profiles have no start codes and no
/// frame type cheap to read: the probe is not made for them.
enum VC1 {
    static let sequenceHeader: UInt8 = 0x0F
    static let frame: UInt8 = 0x0D

    /// The INTERLACE flag of the advanced-profile sequence header (SMPTE 421M § 6.1: PROFILE 2
    /// bits = 3, LEVEL 3, COLORDIFF_FORMAT 2, FRMRTQ_POSTPROC 3, BITRTQ_POSTPROC 5,
    /// POSTPROCFLAG 1, MAX_CODED_WIDTH 12, MAX_CODED_HEIGHT 12, PULLDOWN 1, INTERLACE 1)
    /// found after its start code in `bytes`: the `dvc1` box (SMPTE RP 2025: a 7-byte
    /// header, then the sequence and entry point headers with their start codes) or a
    /// sample. nil when there is none or the profile is not advanced.
    static func interlace(inConfiguration bytes: ArraySlice<UInt8>) -> Bool? {
        var from = bytes.startIndex
        for _ in 0..<Limits.keyFrameProbeUnits {
            guard let code = Bitstream.nextStartCode(in: bytes, from: from, limit: Limits.keyFrameProbeScanBytes),
                  code < bytes.endIndex else { return nil }
            if bytes[code] == sequenceHeader {
                var bits = BitReader(Bitstream.unescaped(bytes[(code + 1)...], limit: 16))
                guard bits.bits(2) == 3, bits.skip(39), let interlace = bits.bit() else { return nil }
                return interlace == 1
            }
            from = code
        }
        return nil
    }

    /// The frame's picture type (SMPTE 421M § 7.1.1): with INTERLACE, FCM first (0
    /// progressive, 10 frame interlace, 11 field interlace). A frame's PTYPE is a VLC:
    /// 110 I (key), 0 P, 10 B, 1110 BI, 1111 skipped. A field pair's FPTYPE is 3 bits whose
    /// first field is I for 000 (I/I) and 001 (I/P): key. A sequence header in the sample
    /// overrides the configuration's INTERLACE.
    static func isKeyFrame(_ sample: ArraySlice<UInt8>, interlace configured: Bool) -> Bool? {
        var interlace = configured
        var frameStart: Int?
        if sample.count >= 4, sample[sample.startIndex] == 0, sample[sample.startIndex + 1] == 0,
           sample[sample.startIndex + 2] == 1 {
            var from = sample.startIndex
            for _ in 0..<Limits.keyFrameProbeUnits {
                guard let code = Bitstream.nextStartCode(in: sample, from: from,
                                                         limit: Limits.keyFrameProbeScanBytes),
                      code < sample.endIndex else { return nil }
                if sample[code] == sequenceHeader {
                    guard let flag = Self.interlace(inConfiguration: sample[(code - 3)...]) else { return nil }
                    interlace = flag
                } else if sample[code] == frame {
                    frameStart = code + 1
                    break
                }
                from = code
            }
        } else {
            frameStart = sample.startIndex
        }
        guard let frameStart else { return nil }
        var bits = BitReader(Bitstream.unescaped(sample[frameStart...], limit: 8))
        if interlace {
            guard let progressive = bits.bit() else { return nil }
            if progressive == 1 {
                guard let field = bits.bit() else { return nil }
                if field == 1 {
                    guard let fieldTypes = bits.bits(3) else { return nil }
                    return fieldTypes <= 1
                }
            }
        }
        var ones = 0
        while ones < 4 {
            guard let next = bits.bit() else { return nil }
            if next == 0 { break }
            ones += 1
        }
        return ones == 2
    }
}
