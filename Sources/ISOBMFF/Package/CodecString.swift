/// The codec of a sample description as RFC 6381 names it (the `CODECS` attribute of an HLS
/// playlist, RFC 8216 § 4.4.6.2; the `@codecs` of a DASH representation, ISO/IEC 23009-1
/// § 5.3.7.2), computed from the entry's configuration box, never from a table of names.
///
/// - `avc1`/`avc3`: `avc1.PPCCLL`, profile, constraint flags and level of the `avcC`
///   (ISO/IEC 14496-15 § 5.3.3.1), hex.
/// - `hvc1`/`hev1`: ISO/IEC 14496-15 Annex E.3: profile space letter and profile, the
///   compatibility flags bit-reversed in hex, tier `L`/`H` and level, then the constraint
///   bytes with trailing zero bytes left out. The entry's own name is kept: Apple's players
///   refuse `hev1` content signalled as `hvc1` and the reverse.
/// - `av01`: AV1 ISOBMFF binding § 5 (`av01.P.LLT.DD`) from the `av1C`.
/// - `vp09`: VP Codec ISOBMFF binding (`vp09.PP.LL.DD`) from the `vpcC`.
/// - `mp4a`: `mp4a.40.N` with N the signalled AudioSpecificConfig object type (RFC 6381
///   § 3.3) when the `esds` object type is 0x40, else `mp4a.` and the object type in hex
///   (`mp4a.6B` for MP3).
/// - `ac-3`, `ec-3`, `alac` as they are; `Opus` and `fLaC` spelt as their entries are
///   (case matters to Apple's players).
public enum CodecString {
    /// The codec string of `description`; nil when its configuration is missing or too short
    /// to say (a playlist then cannot describe the track honestly).
    public static func rfc6381(_ description: SampleDescription) -> String? {
        let name = description.format.description
        if let video = description.video {
            return visual(name, video.configuration)
        }
        guard let audio = description.audio else { return nil }
        switch name {
        case "mp4a":
            guard let descriptor = audio.elementaryStreamDescriptor, descriptor.hasDecoderConfiguration else {
                return nil
            }
            if descriptor.objectTypeIndication == 0x40 {
                guard let info = descriptor.decoderSpecificInfo,
                      let config = try? AudioSpecificConfig(parsing: info) else { return nil }
                return "mp4a.40.\(config.signalledObjectType)"
            }
            return "mp4a." + descriptor.objectTypeIndication.hexDigits(uppercase: true)
        case "ac-3", "ec-3", "Opus", "fLaC", "alac":
            return name
        default:
            return nil
        }
    }

    /// The string of a video entry named `name` (`avc1`, `hvc1`, …) with configuration `box`;
    /// nil when the box is not that codec's or too short.
    public static func visual(_ name: String, _ box: CodecConfigurationBox?) -> String? {
        guard let box else { return nil }
        let record = box.payload
        switch (name, box.type.description) {
        case ("avc1", "avcC"), ("avc3", "avcC"):
            guard record.count >= 4 else { return nil }
            return name + "." + record[1...3].map { $0.hexDigits() }.joined()
        case ("hvc1", "hvcC"), ("hev1", "hvcC"):
            guard record.count >= 13 else { return nil }
            let space = ["", "A", "B", "C"][Int(record[1] >> 6)]
            let profile = Int(record[1] & 0x1F)
            let compatibility = record[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            var reversed: UInt32 = 0
            for bit in 0..<32 where compatibility & (1 << bit) != 0 { reversed |= 1 << (31 - bit) }
            let tier = record[1] & 0x20 != 0 ? "H" : "L"
            var constraints = Array(record[6..<12])
            while let last = constraints.last, last == 0 { constraints.removeLast() }
            // Without leading zeros, as the codecs parameter spells these fields.
            let suffix = constraints.map { $0.hexDigits(1, uppercase: true) }.joined(separator: ".")
            return "\(name).\(space)\(profile).\(reversed.hexDigits(1, uppercase: true)).\(tier)\(record[12])"
                + (suffix.isEmpty ? "" : "." + suffix)
        case ("av01", "av1C"):
            // marker/version, then seq_profile (3) seq_level_idx_0 (5), then seq_tier_0,
            // high_bitdepth, twelve_bit, … (AV1 ISOBMFF binding § 2.3.3).
            guard record.count >= 4, record[0] & 0x80 != 0 else { return nil }
            let profile = record[1] >> 5
            let level = record[1] & 0x1F
            let tier = record[2] & 0x80 != 0 ? "H" : "M"
            let depth = record[2] & 0x40 == 0 ? 8 : record[2] & 0x20 != 0 ? 12 : 10
            return "av01.\(profile).\(twoDigits(Int(level)))\(tier).\(twoDigits(depth))"
        case ("vp09", "vpcC"):
            // A full box, version 1: profile, level, bitDepth (4) … (VP codec ISOBMFF § 2.2).
            guard record.count >= 7, record[0] == 1 else { return nil }
            return "vp09.\(twoDigits(Int(record[4]))).\(twoDigits(Int(record[5]))).\(twoDigits(Int(record[6] >> 4)))"
        default:
            return nil
        }
    }

    static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
