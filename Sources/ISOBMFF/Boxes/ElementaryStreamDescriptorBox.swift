/// `esds`: the MPEG-4 ES_Descriptor of an `mp4a` entry (ISO/IEC 14496-14 § 5.6, with the
/// descriptors of ISO/IEC 14496-1 § 7.2.6). It names the codec (`objectTypeIndication`) and
/// carries the decoder configuration, for AAC the AudioSpecificConfig.
public struct ElementaryStreamDescriptorBox: Box {
    public static let type = FourCC.esds

    /// Descriptor tags (ISO/IEC 14496-1 § 7.2.2.1).
    enum Tag {
        static let esDescriptor: UInt8 = 0x03
        static let decoderConfig: UInt8 = 0x04
        static let decoderSpecificInfo: UInt8 = 0x05
    }

    /// The full-box version; parsing refuses anything but 0, the only one defined.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32
    /// The ES_Descriptor's `ES_ID`: 0 in MP4 files, whose tracks are identified by `tkhd`
    /// instead (ISO/IEC 14496-14).
    public var esID: UInt16
    /// Whether a DecoderConfigDescriptor follows the ES_Descriptor's fields, where
    /// ISO/IEC 14496-1 § 7.2.6.5 puts it. When not (another descriptor stands there), the
    /// codec and its configuration are unknown: the fields below are 0 and
    /// ``decoderSpecificInfo`` is nil, and FFmpeg too reads no configuration.
    public var hasDecoderConfiguration: Bool
    /// 0x40 MPEG-4 audio, 0x66–0x68 MPEG-2 AAC, 0x69 MPEG-2 audio (MP3/MP2), 0x6B MP3; 0
    /// (forbidden by Table 5) without a DecoderConfigDescriptor.
    public var objectTypeIndication: UInt8
    /// The DecoderConfigDescriptor's `streamType` (5 for audio), without the `upStream` and
    /// reserved bits that share its byte.
    public var streamType: UInt8
    /// `bufferSizeDB`: the decoding buffer size in bytes, as the encoder stated it.
    public var bufferSize: UInt32
    /// The peak bit rate in bits per second over any one-second window, as stated.
    public var maxBitrate: UInt32
    /// The average bit rate in bits per second; 0 for a variable bit rate.
    public var averageBitrate: UInt32
    /// The DecoderSpecificInfo bytes (for AAC, the AudioSpecificConfig): the descriptor
    /// right after the DecoderConfigDescriptor's 13 bytes of fields (§ 7.2.6.6), nil when
    /// another one stands there.
    public var decoderSpecificInfo: [UInt8]?
    /// The payload as read (version and flags included), so the box is written back exactly.
    public var rawPayload: [UInt8]

    /// Parses the descriptors by their structure (ISO/IEC 14496-1 § 7.2.6.5–7.2.6.7): the
    /// ES_Descriptor first, its fields, then the DecoderConfigDescriptor, then its fields,
    /// then the DecoderSpecificInfo. A descriptor of another tag where one of these must
    /// stand ends the search, as in FFmpeg (`mov_read_esds`): nothing after it is read as
    /// a configuration, since nothing says it belongs to this stream.
    public init(parsing payload: inout ByteReader) throws {
        var whole = payload
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...0)
        guard var es = try Self.descriptor(in: &payload, tag: Tag.esDescriptor) else {
            throw payload.error(.invalidValue, "the first descriptor is not an ES_Descriptor (tag 0x03)")
        }
        esID = try es.readUInt16()
        let esFlags = try es.readUInt8()
        if esFlags & 0x80 != 0 { try es.skip(2) }  // dependsOn_ES_ID
        if esFlags & 0x40 != 0 { try es.skip(Int(try es.readUInt8())) }  // URL
        if esFlags & 0x20 != 0 { try es.skip(2) }  // OCR_ES_Id
        decoderSpecificInfo = nil
        if var config = try Self.descriptor(in: &es, tag: Tag.decoderConfig) {
            hasDecoderConfiguration = true
            objectTypeIndication = try config.readUInt8()
            streamType = try config.readUInt8() >> 2
            bufferSize = try config.readUInt24()
            maxBitrate = try config.readUInt32()
            averageBitrate = try config.readUInt32()
            if var info = try Self.descriptor(in: &config, tag: Tag.decoderSpecificInfo) {
                decoderSpecificInfo = info.readRemainingBytes()
            }
        } else {
            hasDecoderConfiguration = false
            (objectTypeIndication, streamType, bufferSize, maxBitrate, averageBitrate) = (0, 0, 0, 0, 0)
        }
        rawPayload = whole.readRemainingBytes()
        payload = whole
    }

    /// The descriptor at the reader's position when its tag is `tag`: reads its header
    /// (tag and expandable length, § 8.3.3) and returns a reader over its body, which must
    /// lie inside `reader`. Nil, with nothing read, when the reader is at its end or the
    /// descriptor there has another tag: descriptors are never searched for.
    static func descriptor(in reader: inout ByteReader, tag: UInt8) throws -> ByteReader? {
        // A header takes at least 2 bytes: a lone trailing byte is padding, not a descriptor.
        var peek = reader
        guard reader.remaining >= 2, try peek.readUInt8() == tag else { return nil }
        let start = reader.fileOffset
        _ = try reader.readUInt8()
        var length = 0
        for _ in 0..<4 {
            let byte = try reader.readUInt8()
            length = length << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 { break }
        }
        guard length <= reader.remaining else {
            throw reader.error(.invalidValue,
                               "descriptor 0x\(tag.hexDigits()) claims \(length) bytes, only \(reader.remaining) "
                                   + "remain",
                               at: start)
        }
        return try reader.subReader(count: length)
    }

    /// Writes ``rawPayload`` back unchanged, so descriptors and fields this type does not
    /// model survive a copy.
    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(bytes: rawPayload.dropFirst(4))
        }
    }
}
