/// What a written track is, apart from its samples: the boxes of its `trak` other than the
/// sample tables, which ``MovieWriter`` builds.
///
/// Make one by copying a reader's track (``init(copying:)``) or from a codec configuration
/// built from scratch (``init(_:language:)``).
public struct TrackDescription: Sendable {
    /// The `hdlr`: what the track holds (`soun`, `vide`, …).
    public var handler: HandlerBox
    /// The media timescale: ticks per second of sample durations and edit media times.
    public var timescale: UInt32
    /// The packed `mdhd` language (``MediaHeaderBox/language``); 0x55C4 is `und`.
    public var language: UInt16
    /// The `stsd` entries, each a whole box (header included); samples name them by
    /// 1-based index.
    public var sampleEntries: [[UInt8]]
    /// The media information header box, header included: `smhd`, `vmhd`, `nmhd`, …
    public var mediaInformationHeader: [UInt8]
    /// `trak/udta` as given (header included), written back unchanged; nil for none.
    public var userData: [UInt8]?
    /// `mdia/elng` as given (header included); nil for none.
    public var extendedLanguage: [UInt8]?
    /// The picture's width and height in pixels, 16.16 fixed point (`tkhd`); 0 for audio.
    public var width: UInt32 = 0
    /// See ``width``.
    public var height: UInt32 = 0
    /// The `tkhd` transformation matrix (rotation); nil for the identity.
    public var matrix: [Int32]?
    /// The `tkhd` alternate group: tracks of one group are alternatives (languages).
    public var alternateGroup: Int16 = 0
    /// The `tkhd` volume, 8.8 fixed point: 0x0100 for audio, 0 otherwise.
    public var volume: Int16 = 0
    /// The `tkhd` `track_enabled` flag (in ``flags``): a disabled track is an alternative
    /// players do not play by default.
    public var isEnabled: Bool {
        get { flags & TrackHeaderBox.enabledFlag != 0 }
        set { flags = newValue ? flags | TrackHeaderBox.enabledFlag : flags & ~TrackHeaderBox.enabledFlag }
    }
    /// Track references (`tref`, ISO/IEC 14496-12 § 8.3.3): for each type (`chap`, …) the
    /// referenced track IDs, as IDs of the written movie (``MovieWriter/addTrack(_:)``
    /// returns them).
    public var references: [FourCC: [UInt32]] = [:]
    /// The `tkhd` flags: enabled and in the movie by default (a chapter track is usually
    /// written disabled).
    public var flags: UInt32 = TrackHeaderBox.enabledFlag | TrackHeaderBox.inMovieFlag
    /// The `tkhd` creation and modification times (seconds since 1904); 0 when unknown.
    public var creationTime: UInt64 = 0
    /// See ``creationTime``.
    public var modificationTime: UInt64 = 0
    /// The `mdhd` creation and modification times (seconds since 1904); 0 when unknown.
    public var mediaCreationTime: UInt64 = 0
    /// See ``mediaCreationTime``.
    public var mediaModificationTime: UInt64 = 0
    /// The `mdhd` duration to write when it is not the sum of the samples' durations (an
    /// input whose `mdhd` stops before its last sample ends); nil for the sum.
    public var mediaDuration: UInt64?

    /// Whether `stsz` may state one size for all samples when they share it (ISO/IEC
    /// 14496-12 § 8.7.3.2): only when every sample entry is uncompressed audio
    /// (``AudioSampleEntry/uncompressedFormats``), where a sample is one frame of a fixed
    /// size and QuickTime's readers expect that form. A compressed track gets a size per
    /// sample even when all its packets have one size (CBR Opus, a long silence):
    /// GStreamer 1.22 plays 13.5 ms of a 1 s CBR Opus track whose `stsz` has the constant
    /// form (FFmpeg's own `-c copy` writes it so, and fails the same way).
    public var allowsConstantSampleSize: Bool {
        handler.handlerType == .soun && !sampleEntries.isEmpty && sampleEntries.allSatisfy { entry in
            entry.count >= 8
                && AudioSampleEntry.uncompressedFormats.contains(FourCC(rawValue: entry[4..<8].reduce(0) {
                    $0 << 8 | UInt32($1)
                }))
        }
    }

    /// A description from its parts.
    public init(handler: HandlerBox, timescale: UInt32, language: UInt16 = 0x55C4, sampleEntries: [[UInt8]],
                mediaInformationHeader: [UInt8]) {
        self.handler = handler
        self.timescale = timescale
        self.language = language
        self.sampleEntries = sampleEntries
        self.mediaInformationHeader = mediaInformationHeader
        volume = handler.handlerType == .soun ? 0x0100 : 0
    }

    /// The description of a track of a movie read by ``Movie``: handler, timescale,
    /// language, sample entries (as bytes), media information header, `udta`, `elng`,
    /// picture size, matrix, alternate group and volume. Track references are not copied:
    /// track IDs change in the new file.
    public init(copying track: Track) {
        let header = track.mediaInformationHeader
            ?? Self.defaultMediaInformationHeader(for: TrackKind(handlerType: track.handlerType))
        self.init(handler: track.handler, timescale: track.mediaHeader.timescale, language: track.mediaHeader.language,
                  sampleEntries: track.sampleDescriptions.entries.map(\.bytes), mediaInformationHeader: header)
        userData = track.userData
        extendedLanguage = track.extendedLanguage
        width = track.header.width
        height = track.header.height
        matrix = track.header.matrix == MovieHeaderBox.identityMatrix ? nil : track.header.matrix
        alternateGroup = track.header.alternateGroup
        volume = track.header.volume
    }

    /// The media information header a track of `kind` gets when it has none of its own:
    /// `smhd` for audio, `vmhd` for video, `nmhd` otherwise (ISO/IEC 14496-12 § 12).
    public static func defaultMediaInformationHeader(for kind: TrackKind) -> [UInt8] {
        switch kind {
        case .audio: SoundMediaHeaderBox().serialized
        case .video: VideoMediaHeaderBox().serialized
        default: NullMediaHeader.bytes
        }
    }

    /// The description of a new track holding `codec`, with the media timescale the codec
    /// counts in (the sample rate for audio, 90 kHz for video unless given).
    public init(_ codec: CodecConfiguration, language: String = "und") {
        let isAudio: Bool
        switch codec {
        case .h264, .hevc: isAudio = false
        default: isAudio = true
        }
        self.init(handler: HandlerBox(handlerType: isAudio ? .soun : .vide,
                                      name: isAudio ? "SoundHandler" : "VideoHandler"),
                  timescale: codec.timescale, language: MediaHeaderBox.packedLanguage(language) ?? 0x55C4,
                  sampleEntries: [codec.sampleEntry],
                  mediaInformationHeader: isAudio ? SoundMediaHeaderBox().serialized
                      : VideoMediaHeaderBox().serialized)
        if case .h264(_, let w, let h, _) = codec { (width, height) = (UInt32(w) << 16, UInt32(h) << 16) }
        if case .hevc(_, let w, let h, _) = codec { (width, height) = (UInt32(w) << 16, UInt32(h) << 16) }
    }
}

/// A codec configuration built from scratch: what a track's sample entry says about its
/// coding, with the configuration box each codec's specification defines.
public enum CodecConfiguration: Sendable, Equatable {
    /// AAC: `mp4a` with an `esds` carrying the AudioSpecificConfig (ISO/IEC 14496-3 § 1.6.2.1,
    /// ISO/IEC 14496-14 § 5.6). Bit rates in bits per second; 0 when unknown.
    case aac(audioSpecificConfig: [UInt8], sampleRate: UInt32, channelCount: UInt16, averageBitrate: UInt32 = 0,
             maxBitrate: UInt32 = 0)
    /// Apple Lossless: `alac` with an `alac` box holding the 24-byte (or longer) magic
    /// cookie, the ALACSpecificConfig.
    case alac(magicCookie: [UInt8], sampleRate: UInt32, channelCount: UInt16, bitDepth: UInt16)
    /// Opus: `Opus` with `dOps` (Encapsulation of Opus in ISOBMFF § 4.3.2). The media
    /// timescale is 48 kHz. `channelMapping` holds the stream count, coupled count and the
    /// mapping table when `channelMappingFamily` is not 0.
    case opus(outputChannelCount: UInt8, preSkip: UInt16, inputSampleRate: UInt32, outputGain: Int16 = 0,
              channelMappingFamily: UInt8 = 0, channelMapping: [UInt8] = [])
    /// FLAC: `fLaC` with `dfLa` (FLAC in ISOBMFF § 3.3.2) holding the metadata blocks,
    /// STREAMINFO first, each with its 4-byte header (the last one flagged last).
    case flac(metadataBlocks: [UInt8], sampleRate: UInt32, channelCount: UInt16, bitsPerSample: UInt16)
    /// AC-3: `ac-3` with `dac3` (ETSI TS 102 366 § F.4): the fields of the first
    /// synchronization frame.
    case ac3(sampleRateCode: UInt8, bitStreamID: UInt8, bitStreamMode: UInt8, audioCodingMode: UInt8,
             lfeOn: Bool, bitRateCode: UInt8, sampleRate: UInt32, channelCount: UInt16)
    /// H.264: `avc1` with the `avcC` record (ISO/IEC 14496-15 § 5.3.3.1) as bytes, without
    /// a box header; the picture size in pixels; the media timescale (90 kHz is usual).
    case h264(avcC: [UInt8], width: UInt16, height: UInt16, timescale: UInt32 = 90_000)
    /// HEVC: `hvc1` with the `hvcC` record (ISO/IEC 14496-15 § 8.3.3.1) as bytes, without a
    /// box header; the picture size in pixels; the media timescale.
    case hevc(hvcC: [UInt8], width: UInt16, height: UInt16, timescale: UInt32 = 90_000)

    /// The media timescale the track counts in: the sample rate, 48 kHz for Opus, the given
    /// timescale for video.
    public var timescale: UInt32 {
        switch self {
        case .aac(_, let rate, _, _, _), .alac(_, let rate, _, _), .flac(_, let rate, _, _),
             .ac3(_, _, _, _, _, _, let rate, _):
            return rate
        case .opus: return 48_000
        case .h264(_, _, _, let timescale), .hevc(_, _, _, let timescale): return timescale
        }
    }

    /// The whole `stsd` entry, header included.
    public var sampleEntry: [UInt8] {
        switch self {
        case let .aac(config, rate, channels, average, peak):
            var writer = BoxWriter()
            writer.fullBox(.esds, version: 0, flags: 0) { w in
                // ES_Descriptor (tag 3): ES_ID 0, no flags; DecoderConfigDescriptor (tag 4):
                // MPEG-4 audio (0x40), audio stream (5 << 2 | 1 reserved); DecoderSpecificInfo
                // (tag 5); SLConfigDescriptor (tag 6) predefined 2 (MP4 files).
                let info = Self.descriptor(5, config)
                let decoder = Self.descriptor(4, [0x40, 0x15, 0, 0, 0] + Self.bytes(peak) + Self.bytes(average) + info)
                w.write(bytes: Self.descriptor(3, [0, 0, 0] + decoder + Self.descriptor(6, [2])))
            }
            return AudioSampleEntry.isoEntry(format: .mp4a, channelCount: channels, sampleRate: rate,
                                             children: [writer.bytes])
        case let .alac(cookie, rate, channels, depth):
            var writer = BoxWriter()
            writer.fullBox("alac", version: 0, flags: 0) { $0.write(bytes: cookie) }
            return AudioSampleEntry.isoEntry(format: "alac", channelCount: channels, sampleSize: depth,
                                             sampleRate: rate, children: [writer.bytes])
        case let .opus(channels, preSkip, inputRate, gain, family, mapping):
            var writer = BoxWriter()
            writer.box("dOps") { w in
                w.write(UInt8(0))  // Version.
                w.write(channels)
                w.write(preSkip)
                w.write(inputRate)
                w.write(gain)
                w.write(family)
                if family != 0 { w.write(bytes: mapping) }
            }
            return AudioSampleEntry.isoEntry(format: "Opus", channelCount: UInt16(channels), sampleRate: 48_000,
                                             children: [writer.bytes])
        case let .flac(blocks, rate, channels, bits):
            var writer = BoxWriter()
            writer.fullBox("dfLa", version: 0, flags: 0) { $0.write(bytes: blocks) }
            return AudioSampleEntry.isoEntry(format: "fLaC", channelCount: channels, sampleSize: bits,
                                             sampleRate: rate, children: [writer.bytes])
        case let .ac3(fscod, bsid, bsmod, acmod, lfe, bitRate, rate, channels):
            var writer = BoxWriter()
            writer.box("dac3") { w in
                // fscod 2 | bsid 5 | bsmod 3 | acmod 3 | lfeon 1 | bit_rate_code 5 | reserved 5.
                let bits = UInt32(fscod & 3) << 22 | UInt32(bsid & 0x1F) << 17 | UInt32(bsmod & 7) << 14
                    | UInt32(acmod & 7) << 11 | (lfe ? 1 << 10 : 0) | UInt32(bitRate & 0x1F) << 5
                w.writeUInt24(bits)
            }
            return AudioSampleEntry.isoEntry(format: "ac-3", channelCount: channels, sampleRate: rate,
                                             children: [writer.bytes])
        case let .h264(record, width, height, _):
            return Self.visualEntry(format: "avc1", configuration: "avcC", record, width: width, height: height)
        case let .hevc(record, width, height, _):
            return Self.visualEntry(format: "hvc1", configuration: "hvcC", record, width: width, height: height)
        }
    }

    /// A `VisualSampleEntry` (ISO/IEC 14496-12 § 12.1.3) with one configuration box.
    static func visualEntry(format: FourCC, configuration: FourCC, _ record: [UInt8], width: UInt16,
                            height: UInt16) -> [UInt8] {
        var writer = BoxWriter()
        writer.box(format) { w in
            w.writeZeros(6)
            w.write(UInt16(1))  // data_reference_index
            w.writeZeros(16)  // pre_defined, reserved, pre_defined[3]
            w.write(width)
            w.write(height)
            w.write(UInt32(0x0048_0000))  // 72 dpi horizontally
            w.write(UInt32(0x0048_0000))  // and vertically
            w.writeZeros(4)  // reserved
            w.write(UInt16(1))  // frame_count
            w.writeZeros(32)  // compressorname: empty
            w.write(UInt16(0x0018))  // depth: colour, no alpha
            w.write(Int16(-1))  // pre_defined
            w.box(configuration) { $0.write(bytes: record) }
        }
        return writer.bytes
    }

    static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// An MPEG-4 descriptor (ISO/IEC 14496-1 § 8.3.3): tag, then the length in four
    /// 7-bit groups (the fixed-width form every MP4 writer uses), then the body.
    static func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: body.count)  // Configurations are a few bytes.
        return [tag, UInt8(0x80 | (length >> 21) & 0x7F), UInt8(0x80 | (length >> 14) & 0x7F),
                UInt8(0x80 | (length >> 7) & 0x7F), UInt8(length & 0x7F)] + body
    }
}
