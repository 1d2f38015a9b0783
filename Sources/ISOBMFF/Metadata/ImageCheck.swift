/// Whether the bytes of a cover are a whole image of their format, read as far as a decoder
/// must before it draws a pixel: bytes that only start like a JPEG or a PNG make a `covr`
/// that players and `ffmpeg -map 0 -c copy` fail on (issue 28).
extension TagImage {
    /// What is wrong with ``bytes`` as a ``format`` image, in one sentence; nil when they are
    /// a whole one.
    ///
    /// - JPEG (ITU-T T.81, Annex B): markers from SOI, each segment's length inside the
    ///   data, a frame header (SOF0–SOF15 but DHT, JPG and DAC) before the first scan (SOS),
    ///   and an EOI marker after it.
    /// - PNG (ISO/IEC 15948, § 5): the signature, then chunks whose lengths fit and whose
    ///   CRC-32s are right, IHDR (13 bytes) first, at least one IDAT, IEND last.
    public var structuralProblem: String? {
        switch format {
        case .jpeg: return Self.jpegProblem(bytes)
        case .png: return Self.pngProblem(bytes)
        }
    }

    static func jpegProblem(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return "it does not start with SOI" }
        var at = 2
        var frame = false
        while true {
            guard at < bytes.count, bytes[at] == 0xFF else {
                return "no marker at byte \(at) (expected after the segment before it)"
            }
            while at < bytes.count && bytes[at] == 0xFF { at += 1 }  // Fill bytes (B.1.1.2).
            guard at < bytes.count else { return "it ends in a marker" }
            let marker = bytes[at]
            at += 1
            switch marker {
            case 0xD8: return "a second SOI at byte \(at - 2)"
            case 0xD9: return "EOI at byte \(at - 2) before any scan"
            case 0x01, 0xD0...0xD7: continue  // TEM, RSTn: no length.
            default: break
            }
            guard at + 2 <= bytes.count else { return "the segment of marker FF\(hex(marker)) is cut short" }
            let length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            guard length >= 2, at + length <= bytes.count else {
                return "the segment of marker FF\(hex(marker)) at byte \(at - 2) runs past the data"
            }
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) { frame = true }
            if marker == 0xDA {
                guard frame else { return "a scan (SOS) before any frame header (SOF)" }
                // Entropy-coded data follows; the image ends with EOI (trailing bytes after it,
                // which some writers leave, are ignored by decoders).
                let scan = at + length
                var end = bytes.count - 2
                while end >= scan {
                    if bytes[end] == 0xFF && bytes[end + 1] == 0xD9 { return nil }
                    end -= 1
                }
                return "no EOI after the scan"
            }
            at += length
        }
    }

    static func pngProblem(_ bytes: [UInt8]) -> String? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.starts(with: signature) else { return "it does not start with PNG's signature" }
        var at = signature.count
        var index = 0
        var data = false
        while at < bytes.count {
            guard bytes.count - at >= 12 else { return "the chunk at byte \(at) is cut short" }
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length <= bytes.count - at - 12 else { return "the chunk at byte \(at) runs past the data" }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let stored = bytes[(at + 8 + length)..<(at + 12 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard CRC32.of(bytes[(at + 4)..<(at + 8 + length)]) == stored else {
                return "the \(type) chunk at byte \(at) fails its CRC"
            }
            if index == 0 && (type != "IHDR" || length != 13) { return "the first chunk is not a 13-byte IHDR" }
            if type == "IDAT" { data = true }
            if type == "IEND" { return data ? nil : "IEND before any IDAT" }
            at += 12 + length
            index += 1
        }
        return "no IEND chunk"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

/// CRC-32 as PNG (and zlib, Ethernet) compute it: polynomial 0xEDB88320 (reflected), initial
/// and final value 0xFFFFFFFF (ISO/IEC 15948, Annex D).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func of(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
