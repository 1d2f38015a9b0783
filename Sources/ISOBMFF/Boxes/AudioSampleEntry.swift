/// An audio sample entry: ISO's `AudioSampleEntry` (ISO/IEC 14496-12 § 12.2.3) or a
/// QuickTime sound sample description of version 0, 1 or 2 (QuickTime File Format, "Sound
/// Sample Descriptions"), with its child boxes.
///
/// For AAC the codec configuration sits in an `esds` child, or, in QuickTime files, in an
/// `esds` inside a `wave` box; ``elementaryStreamDescriptor`` finds it in either place.
public struct AudioSampleEntry: Sendable, Equatable {
    /// The entry's box type, which names the coding: `mp4a`, `alac`, `Opus`, … (§ 8.5.2.2).
    public var format: FourCC
    /// 1-based index into the track's `dref` (§ 8.7.2): which file holds the samples.
    public var dataReferenceIndex: UInt16
    /// 0 in ISO files; 1 or 2 for QuickTime's extended sound descriptions.
    public var version: UInt16
    /// The `channelcount` field (§ 12.2.3). Writers often leave it at 2 whatever the stream
    /// holds: prefer the count the codec configuration states.
    public var channelCount: UInt16
    /// Bits per sample (`samplesize`, 16 in ISO files); meaningful for PCM only.
    public var sampleSize: UInt16
    /// The sample rate field (16.16); QuickTime version 2 puts it in ``sampleRateV2``.
    public var sampleRate: UInt32
    /// QuickTime version 2's 64-bit float sample rate.
    public var sampleRateV2: Double?
    /// QuickTime version 2's channel count.
    public var channelCountV2: UInt32?
    /// The child boxes, each with its header, in file order.
    public var children: [(type: FourCC, bytes: [UInt8])]

    /// The sample rate the entry's fields declare, in whole hertz: QuickTime version 2's
    /// floating rate rounded where it is a sensible number, else the 16.16 field's integer part.
    public var declaredSampleRate: Int {
        sampleRateV2.flatMap { MediaTime.integer($0) }.flatMap { Int(exactly: $0) } ?? Int(sampleRate >> 16)
    }

    /// The channel count the entry's fields declare (QuickTime version 2's where there is one).
    public var declaredChannelCount: Int { Int(channelCountV2 ?? UInt32(channelCount)) }
    /// The `esds`, directly inside the entry or inside `wave`.
    public var elementaryStreamDescriptor: ElementaryStreamDescriptorBox?
    /// Whether the entry has a QuickTime `wave` box (which wraps the codec configuration).
    public var hasWaveBox: Bool
    /// The children of a QuickTime `wave` box (`frma`, `esds`, `alac`, …), each with its
    /// header; empty without `wave`.
    public var waveChildren: [(type: FourCC, bytes: [UInt8])]

    /// The formats of uncompressed audio, where a sample is one audio frame and every
    /// sample has the frame's size: QuickTime's PCM (`raw `/`NONE`, `twos`, `sowt`, `in24`,
    /// `in32`, `fl32`, `fl64`, `lpcm`) and G.711 (`ulaw`, `alaw`, one byte a channel), and
    /// ISO/IEC 23003-5's `ipcm` and `fpcm`. Their tracks have no pre-roll and may state
    /// one size for all samples in `stsz` (``TrackDescription/allowsConstantSampleSize``).
    public static let uncompressedFormats: Set<FourCC> = [
        "raw ", "NONE", "twos", "sowt", "in24", "in32", "fl32", "fl64", "lpcm", "ulaw", "alaw", "ipcm", "fpcm",
    ]

    /// The first box of `type` among the children, then inside `wave`: where a codec keeps
    /// its configuration (`esds`, `alac`, `dac3`, `dec3`, `dOps`, `dfLa`).
    public func configurationBox(_ type: FourCC) -> [UInt8]? {
        children.first { $0.type == type }?.bytes ?? waveChildren.first { $0.type == type }?.bytes
    }

    /// The child box `type` (or the child of `wave`) as a configuration box: its payload
    /// after the header (16 bytes with a 64-bit size, else 8); nil when there is none.
    public func configuration(_ type: FourCC) -> CodecConfigurationBox? {
        guard let bytes = configurationBox(type), bytes.count >= 8 else { return nil }
        let headerLength = bytes.count >= 16 && bytes[0..<4].elementsEqual([0, 0, 0, 1]) ? 16 : 8
        return CodecConfigurationBox(type: type, payload: Array(bytes[headerLength...]))
    }

    public static func == (lhs: AudioSampleEntry, rhs: AudioSampleEntry) -> Bool {
        lhs.format == rhs.format && lhs.dataReferenceIndex == rhs.dataReferenceIndex && lhs.version == rhs.version
            && lhs.channelCount == rhs.channelCount && lhs.sampleSize == rhs.sampleSize
            && lhs.sampleRate == rhs.sampleRate && lhs.sampleRateV2 == rhs.sampleRateV2
            && lhs.channelCountV2 == rhs.channelCountV2
            && lhs.children.map(\.type) == rhs.children.map(\.type)
            && lhs.children.map(\.bytes) == rhs.children.map(\.bytes)
            && lhs.elementaryStreamDescriptor == rhs.elementaryStreamDescriptor && lhs.hasWaveBox == rhs.hasWaveBox
            && lhs.waveChildren.map(\.bytes) == rhs.waveChildren.map(\.bytes)
    }

    /// Parses an entry from its bytes.
    ///
    /// - Parameter entry: the `stsd` entry, header included, as ``SampleDescriptionBox`` keeps it.
    /// - Parameter quickTimeLayout: whether a version 1 entry carries QuickTime's 16 extra
    ///   bytes. True for QuickTime files; ISO files use version 0, and FFmpeg reads the
    ///   extension there only for version 2, which this follows.
    public init(parsing entry: SampleDescriptionBox.Entry, quickTimeLayout: Bool) throws {
        var reader = ByteReader(entry.bytes, fileOffset: entry.fileOffset, path: "")
        guard let (header, payload) = try reader.readBox(depth: 0) else {
            throw ISOBMFFError(.truncated, "empty sample entry", path: entry.path, offset: entry.fileOffset)
        }
        var body = payload
        body.path = entry.path
        format = header.type
        try body.skip(6)
        dataReferenceIndex = try body.readUInt16()
        version = try body.readUInt16()
        try body.skip(6)  // Revision level and vendor.
        channelCount = try body.readUInt16()
        sampleSize = try body.readUInt16()
        try body.skip(4)  // Compression ID and packet size.
        sampleRate = try body.readUInt32()
        sampleRateV2 = nil
        channelCountV2 = nil
        if version == 1 && quickTimeLayout {
            try body.skip(16)  // Samples per packet, bytes per packet, frame and sample.
        } else if version == 2 {
            try body.skip(4)  // sizeOfStructOnly
            sampleRateV2 = Double(bitPattern: try body.readUInt64())
            channelCountV2 = try body.readUInt32()
            try body.skip(20)
        } else if version > 2 {
            throw body.error(.unsupportedVersion, "sound sample description version \(version)")
        }
        children = []
        elementaryStreamDescriptor = nil
        hasWaveBox = false
        waveChildren = []
        // QuickTime writers may end the list with a 4-byte zero terminator: stop at < 8 bytes.
        while body.remaining >= 8, let (child, childPayload) = try body.readBox(depth: 7) {
            var childBytes = childPayload
            if child.type == .esds {
                elementaryStreamDescriptor = try ElementaryStreamDescriptorBox(parsing: &childBytes)
            } else if child.type == .wave {
                var wave = childPayload
                hasWaveBox = true
                while wave.remaining >= 8, let (inner, innerPayload) = try wave.readBox(depth: 8) {
                    if inner.type == .esds {
                        var esds = innerPayload
                        elementaryStreamDescriptor = try ElementaryStreamDescriptorBox(parsing: &esds)
                    }
                    waveChildren.append((inner.type, Array(entry.bytes[Self.range(of: inner, in: entry)])))
                }
            }
            children.append((child.type, Array(entry.bytes[Self.range(of: child, in: entry)])))
        }
    }

    private static func range(of child: BoxHeader, in entry: SampleDescriptionBox.Entry) -> Range<Int> {
        // The child lies inside the entry (readBox checked it), so these are exact.
        let start = Int(child.offset - entry.fileOffset)
        return start..<(start + Int(child.size))
    }

    /// An ISO version 0 `AudioSampleEntry` with the given fields and children.
    ///
    /// The sample rate field holds 16.16 fixed point, so rates above 65535 Hz are written as
    /// 0 there (the codec configuration carries the real rate).
    public static func isoEntry(format: FourCC, channelCount: UInt16, sampleSize: UInt16 = 16,
                                sampleRate: UInt32, children: [[UInt8]]) -> [UInt8] {
        var writer = BoxWriter()
        writer.box(format) { w in
            w.writeZeros(6)
            w.write(UInt16(1))  // data_reference_index
            w.writeZeros(8)  // entry version, revision, vendor
            w.write(channelCount)
            w.write(sampleSize)
            w.writeZeros(4)  // pre_defined, reserved
            w.write(sampleRate <= 0xFFFF ? sampleRate << 16 : 0)
            for child in children { w.write(bytes: child) }
        }
        return writer.bytes
    }
}

extension AudioSampleEntry {
    /// The bytes of fixed fields after the header of an audio sample entry: 28 for ISO's
    /// `AudioSampleEntry` and QuickTime's version 0, 44 for QuickTime's version 1 (with
    /// `quickTimeLayout`), 64 for version 2; nil when `entry` is too short to say.
    public static func fieldsSize(of entry: [UInt8], quickTimeLayout: Bool) -> Int? {
        guard entry.count >= 18 else { return nil }
        // The entry version sits after the 8-byte header, 6 reserved bytes and the 2-byte
        // data reference index (QuickTime File Format, "Sound Sample Descriptions").
        let version = UInt16(entry[16]) << 8 | UInt16(entry[17])
        switch version {
        case 0: return 28
        case 1: return quickTimeLayout ? 44 : 28
        case 2: return 64
        default: return nil
        }
    }

    /// `entry` with its child boxes checked by ``CopiedBoxSanitizer``: children nested
    /// deeper than readers accept inside the entry, or of track shape, are dropped (with a
    /// warning each), size-0 children get their real size. Unchanged when all is well.
    public static func sanitized(_ entry: [UInt8], quickTimeLayout: Bool, path: String) -> CopiedBoxSanitizer.Result {
        guard let fields = fieldsSize(of: entry, quickTimeLayout: quickTimeLayout) else {
            return CopiedBoxSanitizer.Result(bytes: entry, warnings: [])
        }
        return CopiedBoxSanitizer.sanitizeEntry(entry, fieldsSize: fields, depth: Limits.sampleEntryDepth, path: path)
    }
}
