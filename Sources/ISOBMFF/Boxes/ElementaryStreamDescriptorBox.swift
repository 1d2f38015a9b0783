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
    /// 0x40 MPEG-4 audio, 0x66–0x68 MPEG-2 AAC, 0x69 MPEG-2 audio (MP3/MP2), 0x6B MP3.
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
    /// The DecoderSpecificInfo bytes: for AAC, the AudioSpecificConfig.
    public var decoderSpecificInfo: [UInt8]?
    /// The payload as read (version and flags included), so the box is written back exactly.
    public var rawPayload: [UInt8]

    public init(parsing payload: inout ByteReader) throws {
        var whole = payload
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...0)
        var es = try Self.descriptor(in: &payload, tag: Tag.esDescriptor)
        esID = try es.readUInt16()
        let esFlags = try es.readUInt8()
        if esFlags & 0x80 != 0 { try es.skip(2) }  // dependsOn_ES_ID
        if esFlags & 0x40 != 0 { try es.skip(Int(try es.readUInt8())) }  // URL
        if esFlags & 0x20 != 0 { try es.skip(2) }  // OCR_ES_Id
        var config = try Self.descriptor(in: &es, tag: Tag.decoderConfig)
        objectTypeIndication = try config.readUInt8()
        streamType = try config.readUInt8() >> 2
        bufferSize = try config.readUInt24()
        maxBitrate = try config.readUInt32()
        averageBitrate = try config.readUInt32()
        decoderSpecificInfo = nil
        if config.remaining >= 2 {
            var info = try Self.descriptor(in: &config, tag: Tag.decoderSpecificInfo)
            decoderSpecificInfo = info.readRemainingBytes()
        }
        rawPayload = whole.readRemainingBytes()
        payload = whole
    }

    /// Reads a descriptor header (tag and expandable length, § 8.3.3) and returns a reader
    /// over its body, which must lie inside `reader`. Descriptors of other tags before the
    /// wanted one are skipped.
    static func descriptor(in reader: inout ByteReader, tag: UInt8) throws -> ByteReader {
        while true {
            let start = reader.fileOffset
            let found = try reader.readUInt8()
            var length = 0
            for _ in 0..<4 {
                let byte = try reader.readUInt8()
                length = length << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            guard length <= reader.remaining else {
                throw reader.error(.invalidValue,
                                   "descriptor 0x\(hex(found)) claims \(length) bytes, only \(reader.remaining) remain",
                                   at: start)
            }
            let body = try reader.subReader(count: length)
            if found == tag { return body }
            if reader.remaining == 0 {
                throw reader.error(.missingBox, "no descriptor with tag 0x\(hex(tag))", at: start)
            }
        }
    }

    /// Writes ``rawPayload`` back unchanged, so descriptors and fields this type does not
    /// model survive a copy.
    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(bytes: rawPayload.dropFirst(4))
        }
    }
}
