/// Key frames of AV1 (AV1 Bitstream & Decoding Process Specification § 5), stored as one
/// temporal unit per sample in the low-overhead format (AV1 ISOBMFF binding § 2.4): OBUs,
/// each with a header and usually a size field.
enum AV1 {
    static let sequenceHeader: UInt32 = 1
    static let frameHeader: UInt32 = 3
    static let frame: UInt32 = 6

    /// The OBUs of `bytes` in order as (obu_type, payload) (§ 5.3.1: forbidden bit,
    /// obu_type 4 bits, extension flag, has_size_field, reserved bit; the extension byte;
    /// leb128 obu_size, or the rest of the bytes without a size field); stops at
    /// ``Limits/keyFrameProbeUnits``, or at the first malformed OBU with `malformed` set.
    struct Walk: IteratorProtocol {
        let bytes: ArraySlice<UInt8>
        var offset: Int
        var count = 0
        var malformed = false

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            offset = bytes.startIndex
        }

        mutating func next() -> (type: UInt32, payload: ArraySlice<UInt8>)? {
            guard !malformed, count < Limits.keyFrameProbeUnits, offset < bytes.endIndex else { return nil }
            count += 1
            let header = bytes[offset]
            guard header & 0x80 == 0 else { return fail() }
            let type = UInt32(header >> 3 & 0x0F)
            var index = offset + 1 + Int(header >> 2 & 1)  // the extension byte, if any
            guard index <= bytes.endIndex else { return fail() }
            var size = bytes.endIndex - index
            if header & 2 != 0 {
                // leb128 (§ 4.10.5): at most 8 bytes, 7 bits each.
                var value: UInt64 = 0
                var done = false
                for byteIndex in 0..<8 where !done {
                    guard index < bytes.endIndex else { return fail() }
                    let byte = bytes[index]
                    index += 1
                    value |= UInt64(byte & 0x7F) << UInt64(7 * byteIndex)
                    done = byte & 0x80 == 0
                }
                guard done, let exact = Int(exactly: value), exact <= bytes.endIndex - index else { return fail() }
                size = exact
            }
            offset = index + size
            return (type, bytes[index..<offset])
        }

        private mutating func fail() -> (type: UInt32, payload: ArraySlice<UInt8>)? {
            malformed = true
            return nil
        }
    }

    /// reduced_still_picture_header from the first sequence header OBU in `bytes`
    /// (§ 5.5.1: seq_profile 3 bits, still_picture, reduced_still_picture_header); nil
    /// when there is none.
    static func reducedStillPictureHeader(in bytes: ArraySlice<UInt8>) -> Bool? {
        var walk = Walk(bytes)
        while let (type, payload) = walk.next() {
            guard type == sequenceHeader else { continue }
            var bits = BitReader(payload.prefix(1))
            guard bits.skip(4), let reduced = bits.bit() else { return nil }
            return reduced == 1
        }
        return nil
    }

    /// The first frame header of the temporal unit decides (§ 5.9.2 uncompressed_header):
    /// with reduced_still_picture_header every frame is a shown key frame; otherwise
    /// show_existing_frame (1 bit: showing an earlier frame needs it, not key), frame_type
    /// (2 bits, KEY_FRAME = 0) and show_frame (a hidden key frame is shown later by another
    /// temporal unit: this one alone shows nothing, not key). A sequence header in the
    /// sample overrides `reducedStillPictureHeader` (from `av1C`); without either, the
    /// header is read as not reduced, as every AV1 video track in practice is.
    static func isKeyFrame(_ sample: ArraySlice<UInt8>, reducedStillPictureHeader configured: Bool?) -> Bool? {
        var reduced = configured ?? false
        var walk = Walk(sample)
        while let (type, payload) = walk.next() {
            switch type {
            case sequenceHeader:
                var bits = BitReader(payload.prefix(1))
                guard bits.skip(4), let flag = bits.bit() else { return nil }
                reduced = flag == 1
            case frameHeader, frame:
                if reduced { return true }
                var bits = BitReader(payload.prefix(1))
                guard let showExisting = bits.bit() else { return nil }
                if showExisting == 1 { return false }
                guard let frameType = bits.bits(2), let show = bits.bit() else { return nil }
                return frameType == 0 && show == 1
            default:
                continue
            }
        }
        return nil
    }
}
