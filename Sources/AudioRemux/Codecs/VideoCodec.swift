import ISOBMFF

/// RFC 6381 codec strings and picture sizes for video sample entries, for `probe`; the
/// entry is parsed by ``VisualSampleEntry`` (no byte offsets here).
enum VideoCodec {
    /// `avc1.64001f`, `hvc1.1.6.L93.B0`, or the format when the configuration is unknown.
    static func codecString(format: FourCC, entry: [UInt8]) -> String {
        let name = format.description
        let configuration = parsed(format: format, entry: entry)?.configuration
        switch name {
        case "avc1", "avc3":
            // AVCDecoderConfigurationRecord (ISO/IEC 14496-15 § 5.3.3.1): version, profile,
            // compatibility, level.
            guard let avcC = configuration, avcC.type == "avcC", avcC.payload.count >= 4 else { return name }
            return name + "." + avcC.payload[1...3].map(hex2).joined()
        case "hvc1", "hev1":
            // HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 § 8.3.3.1).
            guard let hvcC = configuration, hvcC.type == "hvcC", hvcC.payload.count >= 13 else { return name }
            let record = hvcC.payload
            let space = ["", "A", "B", "C"][Int(record[1] >> 6)]
            let profile = Int(record[1] & 0x1F)
            let compatibility = record[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            var reversed: UInt32 = 0
            for bit in 0..<32 where compatibility & (1 << bit) != 0 { reversed |= 1 << (31 - bit) }
            let tier = record[1] & 0x20 != 0 ? "H" : "L"
            var constraints = Array(record[6..<12])
            while let last = constraints.last, last == 0 { constraints.removeLast() }
            let suffix = constraints.map { String($0, radix: 16, uppercase: true) }.joined(separator: ".")
            return "\(name).\(space)\(profile).\(String(reversed, radix: 16, uppercase: true)).\(tier)\(record[12])"
                + (suffix.isEmpty ? "" : "." + suffix)
        default:
            return name
        }
    }

    /// Width and height from the visual sample entry (ISO/IEC 14496-12 § 12.1.3).
    static func size(format: FourCC, entry: [UInt8]) -> (width: Int, height: Int)? {
        guard let parsed = parsed(format: format, entry: entry) else { return nil }
        return (Int(parsed.width), Int(parsed.height))
    }

    /// The entry parsed, or nil when it is too short or its children are broken.
    static func parsed(format: FourCC, entry: [UInt8]) -> VisualSampleEntry? {
        try? VisualSampleEntry(parsing: SampleDescriptionBox.Entry(format: format, bytes: entry))
    }
}

func hex2(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return text.count == 1 ? "0" + text : text
}
