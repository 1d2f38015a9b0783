/// Key frames of the length-prefixed NAL unit streams that ISO/IEC 14496-15 stores: H.264
/// (§ 5.3.2) and HEVC (§ 8.3.2). Each NAL unit is preceded by its size in `lengthSize`
/// big-endian bytes; the probe jumps from header to header and reads only the headers and,
/// for H.264, the SEI messages before the first slice.
enum NALUnits {
    /// The NAL units of `sample` in order, each as its bytes (header included); stops at
    /// ``Limits/keyFrameProbeUnits``. A length running past the sample ends the walk with
    /// `malformed` set.
    struct Walk: IteratorProtocol {
        let sample: ArraySlice<UInt8>
        let lengthSize: Int
        var offset: Int
        var count = 0
        var malformed = false

        init(_ sample: ArraySlice<UInt8>, lengthSize: Int) {
            self.sample = sample
            self.lengthSize = lengthSize
            offset = sample.startIndex
        }

        mutating func next() -> ArraySlice<UInt8>? {
            guard !malformed, count < Limits.keyFrameProbeUnits, offset < sample.endIndex else { return nil }
            count += 1
            guard sample.endIndex - offset >= lengthSize else {
                malformed = true
                return nil
            }
            var length = 0
            for index in offset..<offset + lengthSize {
                // lengthSize <= 4: at most 32 bits, no overflow in a 64-bit Int.
                length = length << 8 | Int(sample[index])
            }
            let start = offset + lengthSize
            guard length <= sample.endIndex - start else {
                malformed = true
                return nil
            }
            offset = start + length
            return sample[start..<offset]
        }
    }

    /// H.264 (ITU-T H.264 § 7.3.1, § 7.4.1.2): the first slice decides. An IDR slice
    /// (nal_unit_type 5) is key; a non-IDR slice (1, or 2 for data partition A) is key only
    /// after a recovery point SEI (§ D.2.8) with recovery_frame_cnt 0, which says that this
    /// very picture is correct in content when decoding starts here (x264's open GOP I
    /// frames). nil when no slice is found.
    static func h264IsKeyFrame(_ sample: ArraySlice<UInt8>, lengthSize: Int) -> Bool? {
        var walk = Walk(sample, lengthSize: lengthSize)
        var recoveryPoint = false
        var budget = Limits.keyFrameProbeScanBytes
        while let nal = walk.next() {
            guard let header = nal.first else { continue }
            guard header & 0x80 == 0 else { return nil }  // forbidden_zero_bit
            switch header & 0x1F {
            case 5: return true
            case 1, 2: return recoveryPoint
            case 6:
                let rbsp = Bitstream.unescaped(nal.dropFirst(), limit: budget)
                budget -= rbsp.count
                if h264RecoveryFrameCount(inSEI: rbsp) == 0 { recoveryPoint = true }
            default: break
            }
        }
        return nil
    }

    /// The recovery_frame_cnt of the first recovery point SEI message (payloadType 6) in
    /// the SEI RBSP `rbsp` (§ 7.3.2.3.1: payload type and size each coded as a run of 0xFF
    /// bytes plus a last byte); nil when there is none within the bytes.
    static func h264RecoveryFrameCount(inSEI rbsp: ArraySlice<UInt8>) -> UInt32? {
        var index = rbsp.startIndex
        func readCode() -> Int? {
            var value = 0
            while index < rbsp.endIndex {
                let byte = rbsp[index]
                index += 1
                // At most one step per byte of a bounded buffer: value < 256 × count.
                value += Int(byte)
                if byte != 0xFF { return value }
            }
            return nil
        }
        // more_rbsp_data: a message needs at least its type and size bytes, and the
        // trailing 0x80 ends the RBSP.
        while rbsp.endIndex - index >= 2, rbsp[index] != 0x80 {
            guard let type = readCode(), let size = readCode(), size <= rbsp.endIndex - index else { return nil }
            if type == 6 {
                var bits = BitReader(rbsp[index..<index + size])
                return bits.unsignedExpGolomb()
            }
            index += size
        }
        return nil
    }

    /// HEVC (ITU-T H.265 § 7.3.1.2, Table 7-1): the first VCL NAL unit of the base layer
    /// decides. IRAP pictures (BLA, IDR, CRA: types 16...23) are key; trailing, leading
    /// and sub-layer pictures (0...9) are not; reserved VCL types tell nothing.
    static func hevcIsKeyFrame(_ sample: ArraySlice<UInt8>, lengthSize: Int) -> Bool? {
        var walk = Walk(sample, lengthSize: lengthSize)
        while let nal = walk.next() {
            guard nal.count >= 2 else { continue }
            let first = nal[nal.startIndex], second = nal[nal.startIndex + 1]
            guard first & 0x80 == 0 else { return nil }  // forbidden_zero_bit
            let type = first >> 1 & 0x3F
            let layer = (first & 1) << 5 | second >> 3
            guard type < 32, layer == 0 else { continue }
            switch type {
            case 16...23: return true
            case 0...9: return false
            default: return nil
            }
        }
        return nil
    }
}
