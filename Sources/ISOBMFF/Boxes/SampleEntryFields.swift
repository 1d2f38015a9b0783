/// Fields every sample entry shares (ISO/IEC 14496-12 § 8.5.2.2), and the size of a text
/// entry's fixed fields, read from an entry's bytes so that no caller counts byte offsets.
extension SampleDescriptionBox.Entry {
    /// `data_reference_index`: which `dref` entry holds the samples (1-based); nil when the
    /// entry is shorter than a `SampleEntry` header (8 bytes of box header, 6 reserved, 2).
    public var dataReferenceIndex: UInt16? {
        var reader = ByteReader(bytes)
        guard (try? reader.skip(8 + 6)) != nil else { return nil }
        return try? reader.readUInt16()
    }

    /// The bytes of fixed fields after the box header of a text sample entry, before its
    /// child boxes: 38 for 3GPP's `tx3g` (3GPP TS 26.245 § 5.16), 51 and a Pascal-string
    /// font name for QuickTime's `text` ("Text Sample Description"); nil for other formats
    /// or an entry too short for them.
    public var textFieldsSize: Int? {
        var reader = ByteReader(bytes)
        guard (try? reader.skip(4)) != nil, let type = try? reader.readFourCC() else { return nil }
        switch type {
        case "tx3g":
            return bytes.count >= 8 + 38 ? 38 : nil
        case "text":
            guard (try? reader.skip(51)) != nil, let nameLength = try? reader.readUInt8() else { return nil }
            let fields = 51 + 1 + Int(nameLength)
            return bytes.count >= 8 + fields ? fields : nil
        default:
            return nil
        }
    }
}
