import ISOBMFF

/// RFC 6381 codec strings and picture sizes for video sample entries, for `probe`.
enum VideoCodec {
    /// `avc1.64001f`, `hvc1.1.6.L93.B0`, or the format when the configuration is unknown.
    static func codecString(format: FourCC, entry: [UInt8]) -> String {
        let name = format.description
        switch name {
        case "avc1", "avc3":
            guard let avcC = child("avcC", in: entry), avcC.count >= 4 else { return name }
            // AVCDecoderConfigurationRecord: version, profile, compatibility, level.
            return name + "." + [avcC[1], avcC[2], avcC[3]].map(hex2).joined()
        case "hvc1", "hev1":
            guard let record = child("hvcC", in: entry), record.count >= 13 else { return name }
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

    /// Width and height from a VisualSampleEntry (ISO/IEC 14496-12 § 12.1.3).
    static func size(entry: [UInt8]) -> (width: Int, height: Int)? {
        guard entry.count >= 36 else { return nil }
        return (Int(entry[32]) << 8 | Int(entry[33]), Int(entry[34]) << 8 | Int(entry[35]))
    }

    /// The payload of the first child box of `type` after the 78-byte VisualSampleEntry fields.
    static func child(_ type: FourCC, in entry: [UInt8]) -> [UInt8]? {
        guard entry.count > 86 else { return nil }
        var reader = ByteReader(Array(entry[86...]))
        while reader.remaining >= 8, let (header, payload) = try? reader.readBox(depth: 8) {
            if header.type == type {
                var body = payload
                return body.readRemainingBytes()
            }
        }
        return nil
    }
}

func hex2(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return text.count == 1 ? "0" + text : text
}
