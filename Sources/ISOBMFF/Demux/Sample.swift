/// One sample of a track — an audio packet, a video frame — as the track's tables describe
/// it (ISO/IEC 14496-12 § 8.6–8.8): where its bytes are, when it is decoded and presented,
/// and whether decoding may start at it.
///
/// Times are in the track's media timescale, with no edit list applied (like
/// `ffprobe -ignore_editlist 1 -show_packets`); ``TrackPresentation`` says what of the media
/// plays.
public struct Sample: Sendable, Equatable {
    /// The absolute file offset of the sample's first byte.
    public var offset: UInt64
    /// The sample's size in bytes.
    public var size: UInt32
    /// The decode time: the sum of the durations of the samples before it, plus the track's
    /// first decode time (a fragment's `tfdt`).
    public var decodeTime: UInt64
    /// Presentation time minus decode time (`ctts`, or a `trun`'s composition offsets);
    /// non-zero with B-frames.
    public var compositionOffset: Int64
    /// How long the sample lasts in decode order (`stts`, or a `trun`'s durations).
    public var duration: UInt32
    /// Whether decoding can start here (`stss`, or a fragment's sample flags); every sample
    /// of a track without `stss` is a sync sample.
    public var isSync: Bool
    /// The 1-based index of the sample's entry in `stsd`.
    public var descriptionIndex: UInt32

    /// Creates a sample from its fields.
    public init(offset: UInt64, size: UInt32, decodeTime: UInt64, compositionOffset: Int64 = 0, duration: UInt32,
                isSync: Bool = true, descriptionIndex: UInt32 = 1) {
        self.offset = offset
        self.size = size
        self.decodeTime = decodeTime
        self.compositionOffset = compositionOffset
        self.duration = duration
        self.isSync = isSync
        self.descriptionIndex = descriptionIndex
    }

    /// The sample's bytes in the file. Samples from a checked table end inside the file;
    /// for a hand-made sample whose end would pass 2^64, the range ends at 2^64 − 1.
    public var byteRange: Range<UInt64> {
        let (end, overflow) = offset.addingReportingOverflow(UInt64(size))
        return offset..<(overflow ? UInt64.max : end)
    }

    /// The presentation time: decode time plus composition offset, clamped to the range of
    /// `Int64` (a table cannot reach it: decode times of a checked table stay below 2^64,
    /// and real ones far below 2^63).
    public var presentationTime: Int64 {
        let decode = Int64(clamping: decodeTime)
        let (sum, overflow) = decode.addingReportingOverflow(compositionOffset)
        return overflow ? (compositionOffset < 0 ? Int64.min : Int64.max) : sum
    }
}

/// What a track holds, from its handler type (`hdlr`, ISO/IEC 14496-12 § 8.4.3; QuickTime
/// File Format, "Handler reference atom").
public enum TrackKind: Sendable, Hashable {
    /// `soun`.
    case audio
    /// `vide`.
    case video
    /// `text`, `sbtl`, `subt`: text, subtitles, chapter titles.
    case text
    /// `tmcd`: QuickTime timecode.
    case timecode
    /// `meta`: timed metadata.
    case metadata
    /// `hint`: RTP hint tracks.
    case hint
    /// Any other handler.
    case other(FourCC)

    /// The kind that `handlerType` names.
    public init(handlerType: FourCC) {
        switch handlerType.description {
        case "soun": self = .audio
        case "vide": self = .video
        case "text", "sbtl", "subt": self = .text
        case "tmcd": self = .timecode
        case "meta": self = .metadata
        case "hint": self = .hint
        default: self = .other(handlerType)
        }
    }
}
