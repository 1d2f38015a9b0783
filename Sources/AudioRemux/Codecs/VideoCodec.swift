import ISOBMFF

/// RFC 6381 codec strings and picture sizes for video sample entries, for `probe`; the
/// entry is parsed by ``VisualSampleEntry`` (no byte offsets here).
enum VideoCodec {
    /// `avc1.64001f`, `hvc1.1.6.L93.B0`, or the format when the configuration is unknown (or
    /// for other codecs: probe names AV1 and VP9 by their entry).
    static func codecString(format: FourCC, entry: [UInt8]) -> String {
        let name = format.description
        let configuration = parsed(format: format, entry: entry)?.configuration
        switch name {
        case "avc1", "avc3", "hvc1", "hev1":
            // One computation for probe and the playlists of package (ISOBMFF's CodecString).
            return CodecString.visual(name, configuration) ?? name
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
