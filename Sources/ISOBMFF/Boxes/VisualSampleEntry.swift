/// A codec configuration box found in a sample entry (`avcC`, `hvcC`, `av1C`, `vpcC` for
/// video; `esds`, `dOps`, `dfLa`, `alac`, `dac3`, `dec3` for audio), typed by its four-character
/// code and kept as its payload bytes: the decoder takes them as they are, and a writer
/// copies them through.
public struct CodecConfigurationBox: Sendable, Equatable {
    /// The box type: `avcC`, `esds`, …
    public var type: FourCC
    /// The payload, after the box header (for a full box such as `esds`, starting with its
    /// version and flags).
    public var payload: [UInt8]

    /// The configuration types this package knows, video then audio.
    public static let knownTypes: [FourCC] = ["avcC", "hvcC", "av1C", "vpcC", "esds", "dOps", "dfLa", "alac",
                                             "dac3", "dec3"]

    /// A configuration box of `type` holding `payload`.
    public init(type: FourCC, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// Writes the box: header and payload.
    public func write(to writer: inout BoxWriter) {
        writer.box(type) { $0.write(bytes: payload) }
    }

    /// The whole box, header included.
    public var bytes: [UInt8] {
        var writer = BoxWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// The payload after a full box's version and flags (`esds`, `dfLa`, `alac`: ISO/IEC
    /// 14496-12 § 4.2): what the codec's own specification defines; nil when shorter.
    public var fullBoxBody: ArraySlice<UInt8>? {
        payload.count >= 4 ? payload[4...] : nil
    }
}

/// A visual sample entry (ISO/IEC 14496-12 § 12.1.3; QuickTime File Format, "Video sample
/// description"): the picture size and the codec's configuration box.
///
/// The fixed fields take 78 bytes after the box header (the 8 of every `SampleEntry`, then
/// 70); child boxes follow: the codec configuration (`avcC`, `hvcC`, `av1C`, `vpcC`), then
/// optional ones (`pasp`, `colr`, `btrt`, …), all kept as they are.
public struct VisualSampleEntry: Sendable, Equatable {
    /// The coding name: `avc1`, `avc3`, `hvc1`, `hev1`, `av01`, `vp09`, `mp4v`, …
    public var format: FourCC
    /// The 1-based `dref` entry that says where the samples are.
    public var dataReferenceIndex: UInt16
    /// The 16 bytes after the data reference index, kept as read: zeros in ISO files
    /// (`pre_defined`, `reserved`), version, revision, vendor and temporal and spatial
    /// quality in QuickTime's video sample description.
    public var predefinedFields: [UInt8]
    /// The coded width in pixels.
    public var width: UInt16
    /// The coded height in pixels.
    public var height: UInt16
    /// Horizontal resolution, 16.16 fixed point pixels per inch (72 dpi: 0x0048_0000).
    public var horizontalResolution: UInt32
    /// Vertical resolution, 16.16 fixed point pixels per inch.
    public var verticalResolution: UInt32
    /// Frames per sample; 1 in every real file.
    public var frameCount: UInt16
    /// The compressor name: a length byte then up to 31 bytes, kept as the 32 bytes read.
    public var compressorNameField: [UInt8]
    /// Bits per pixel: 0x18 for colour without alpha.
    public var depth: UInt16
    /// The last fixed field: -1 in ISO files (`pre_defined`), QuickTime's color table ID.
    public var colorTableID: Int16
    /// The child boxes in order, each with its payload (header excluded).
    public var children: [CodecConfigurationBox]
    /// Bytes after the last child too short to be a box (some writers end the entry with
    /// a 4-byte zero terminator), kept so that the entry is written back unchanged.
    public var trailingBytes: [UInt8]

    /// The codec configuration: the first child among `avcC`, `hvcC`, `av1C`, `vpcC`
    /// (or any of ``CodecConfigurationBox/knownTypes``); nil for codecs without one.
    public var configuration: CodecConfigurationBox? {
        children.first { CodecConfigurationBox.knownTypes.contains($0.type) }
    }

    /// The compressor name as text (its length byte honoured), empty when unset.
    public var compressorName: String {
        guard let length = compressorNameField.first else { return "" }
        let text = compressorNameField.dropFirst().prefix(Int(length))
        return String(decoding: text, as: UTF8.self)
    }

    /// The size of the fixed fields after the box header.
    public static let fixedFieldsSize = 78

    /// A visual entry built in memory, with the usual defaults (72 dpi, 1 frame, depth 24).
    public init(format: FourCC, width: UInt16, height: UInt16, configuration: CodecConfigurationBox?,
                dataReferenceIndex: UInt16 = 1) {
        self.format = format
        self.dataReferenceIndex = dataReferenceIndex
        self.width = width
        self.height = height
        predefinedFields = [UInt8](repeating: 0, count: 16)
        colorTableID = -1
        trailingBytes = []
        horizontalResolution = 0x0048_0000
        verticalResolution = 0x0048_0000
        frameCount = 1
        compressorNameField = [UInt8](repeating: 0, count: 32)
        depth = 0x18
        children = configuration.map { [$0] } ?? []
    }

    /// Parses an entry from its bytes.
    ///
    /// - Parameter entry: the `stsd` entry, header included, as ``SampleDescriptionBox`` keeps it.
    /// - Throws: `.truncated` when the entry is shorter than its 78 bytes of fixed fields, or
    ///   a box error from its children.
    public init(parsing entry: SampleDescriptionBox.Entry) throws {
        var reader = ByteReader(entry.bytes, fileOffset: entry.fileOffset, path: "")
        guard let (header, payload) = try reader.readBox(depth: 0) else {
            throw ISOBMFFError(.truncated, "empty sample entry", path: entry.path, offset: entry.fileOffset)
        }
        var body = payload
        guard body.remaining >= Self.fixedFieldsSize else {
            throw ISOBMFFError(.truncated, "visual sample entry of \(body.remaining) bytes after its header, "
                               + "fewer than the \(Self.fixedFieldsSize) of its fixed fields",
                               path: entry.path, offset: entry.fileOffset)
        }
        format = header.type
        try body.skip(6)  // reserved
        dataReferenceIndex = try body.readUInt16()
        predefinedFields = try body.readBytes(16)  // pre_defined, reserved, pre_defined[3]
        width = try body.readUInt16()
        height = try body.readUInt16()
        horizontalResolution = try body.readUInt32()
        verticalResolution = try body.readUInt32()
        try body.skip(4)  // reserved
        frameCount = try body.readUInt16()
        compressorNameField = try body.readBytes(32)
        depth = try body.readUInt16()
        colorTableID = try body.readInt16()  // pre_defined = -1
        var children: [CodecConfigurationBox] = []
        // Some writers pad the entry with zeros (a 4-byte terminator): fewer than 8 bytes
        // cannot hold a box, and are ignored as FFmpeg does.
        while body.remaining >= 8, let (child, childPayload) = try body.readBox(depth: 1) {
            var bytes = childPayload
            children.append(CodecConfigurationBox(type: child.type, payload: bytes.readRemainingBytes()))
        }
        self.children = children
        trailingBytes = body.readRemainingBytes()
    }

    /// Writes the entry: header, fixed fields, then the children in order; a parsed entry
    /// is written back byte for byte (children with a 64-bit size excepted, written with
    /// a 32-bit one).
    public func write(to writer: inout BoxWriter) {
        writer.box(format) { w in
            w.write(bytes: [0, 0, 0, 0, 0, 0])
            w.write(dataReferenceIndex)
            w.write(bytes: (predefinedFields + [UInt8](repeating: 0, count: 16)).prefix(16))
            w.write(width)
            w.write(height)
            w.write(horizontalResolution)
            w.write(verticalResolution)
            w.write(UInt32(0))
            w.write(frameCount)
            var name = compressorNameField
            name += [UInt8](repeating: 0, count: Swift.max(0, 32 - name.count))
            w.write(bytes: Array(name.prefix(32)))
            w.write(depth)
            w.write(colorTableID)
            for child in children { child.write(to: &w) }
            w.write(bytes: trailingBytes)
        }
    }
}
