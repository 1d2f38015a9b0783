/// Key frames of VP9 (VP9 Bitstream Specification v0.6 § 6.2, uncompressed_header). A
/// sample is one frame or a superframe (Annex B) whose index sits at its end and whose
/// first frame starts at byte 0: the first frame decides.
enum VP9 {
    /// frame_marker (2 bits, must be 2), profile_low_bit, profile_high_bit, a reserved zero
    /// bit for profile 3, show_existing_frame (a repeat of a decoded frame: not key), then
    /// frame_type: 0 is KEY_FRAME. Intra-only frames (frame_type 1) are not key: they may
    /// leave reference slots as they were.
    static func isKeyFrame(_ sample: ArraySlice<UInt8>) -> Bool? {
        var bits = BitReader(sample.prefix(2))
        guard bits.bits(2) == 2, let low = bits.bit(), let high = bits.bit() else { return nil }
        if high << 1 | low == 3 {
            guard bits.bit() == 0 else { return nil }
        }
        guard let showExisting = bits.bit() else { return nil }
        if showExisting == 1 { return false }
        guard let frameType = bits.bit() else { return nil }
        return frameType == 0
    }
}
