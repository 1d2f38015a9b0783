import ISOBMFF

/// What `probe` says about a file: brands, layout and every track, read from the box
/// structure (and, for fragmented files, the fragment headers) without reading samples.
public struct MovieReport: Sendable {
    /// The `ftyp` major brand; nil when the file has no `ftyp`.
    public var majorBrand: FourCC?
    /// The `ftyp` minor version; nil when the file has no `ftyp`.
    public var minorVersion: UInt32?
    /// The `ftyp` compatible brands; empty when the file has no `ftyp`.
    public var compatibleBrands: [FourCC]
    /// Whether the file uses movie fragments (`mvex`, `moof`; ISO/IEC 14496-12 § 8.8).
    public var isFragmented: Bool
    /// Where `moov` starts: near 0 in a "faststart" file that can play while it downloads,
    /// near the end otherwise.
    public var movieBoxOffset: UInt64
    /// The size of `moov` in bytes, header included.
    public var movieBoxSize: UInt64
    /// Seconds: the longest track's presented duration.
    public var duration: Double
    /// Every track, in file order.
    public var tracks: [TrackReport]
    /// The chapters (chapter track or Nero `chpl`), empty when there are none.
    public var chapters: [Chapter]
    /// The metadata items: iTunes-style ones of `moov/udta/meta/ilst`, then keys-based ones
    /// of `moov/meta` (named by their key), in file order.
    public var metadata: [MetadataItem]
}

/// One track as `probe` describes it: identity, kind, codec, timing and, for audio, the
/// reason it cannot be extracted if it cannot.
public struct TrackReport: Sendable, Equatable {
    /// The `tkhd` track ID, as `--track-id` takes it.
    public var trackID: UInt32
    /// The `hdlr` handler type (`soun`, `vide`, `text`, …).
    public var handlerType: FourCC
    /// "audio", "video", "text", "timecode" or "other".
    public var kind: String
    /// The first sample entry's format (`mp4a`, `avc1`, …).
    public var format: String
    /// The RFC 6381 codec string (`mp4a.40.2`, `avc1.64001f`, `Opus`, `ac-3`).
    public var codec: String
    /// The presented duration in seconds: the edit list's, or else the media's.
    public var duration: Double
    /// The number of samples; 0 when the sample tables cannot be read.
    public var sampleCount: Int
    /// Average bits per second over the media duration.
    public var bitrate: Int
    /// The ISO 639-2/T language from `mdhd` (`eng`, `und`); nil when the field holds no valid
    /// code.
    public var language: String?
    /// Whether the track is enabled (`tkhd`); players skip disabled tracks.
    public var isEnabled: Bool
    /// The `tkhd` alternate group: tracks sharing a non-zero group are alternatives.
    public var alternateGroup: Int
    /// Audio: the sample rate and channel count the codec configuration states (not the
    /// sample entry's often-wrong fields), and the priming the edit list skips.
    public var sampleRate: Int?
    /// Audio: the channel count the codec configuration states.
    public var channelCount: Int?
    /// Audio: the samples of encoder delay the edit list skips (its first `media_time`).
    public var primingSamples: Int?
    /// Audio: 0 for the first audio track, as `--track` counts.
    public var audioIndex: Int?
    /// Video: the picture size.
    public var width: Int?
    /// Video: the picture height in pixels, from the sample entry.
    public var height: Int?
    /// Why the track cannot be extracted, when it is audio that cannot.
    public var extractionProblem: String?
    /// The edit list (`elst`), in the movie timescale and the media timescale.
    public var editList: [EditListBox.Entry] = []
}

extension AudioExtractor {
    /// Describes the file at `path` and its tracks.
    public static func probe(_ path: String) throws -> MovieReport {
        let input = try InputFile(path: path)
        return try probe(input)
    }

    /// Describes the movie in `source` and its tracks.
    public static func probe(_ source: some ByteSource) throws -> MovieReport {
        let movie = try parse { try Movie(reading: source) }
        var tracks: [TrackReport] = []
        var audioIndex = 0
        for track in movie.tracks {
            var report = try trackReport(track, movie: movie, source: source)
            if track.isAudio {
                report.audioIndex = audioIndex
                audioIndex += 1
            }
            tracks.append(report)
        }
        let movieDuration = movie.header.timescale == 0 ? 0
            : Double(movie.header.duration) / Double(movie.header.timescale)
        return MovieReport(
            majorBrand: movie.fileType?.majorBrand, minorVersion: movie.fileType?.minorVersion,
            compatibleBrands: movie.fileType?.compatibleBrands ?? [], isFragmented: movie.isFragmented,
            movieBoxOffset: movie.movieBoxRange.lowerBound,
            movieBoxSize: movie.movieBoxRange.upperBound - movie.movieBoxRange.lowerBound,
            duration: max(movieDuration, tracks.map(\.duration).max() ?? 0), tracks: tracks,
            chapters: Chapters.read(movie, source: source),
            metadata: Metadata.items(userData: movie.userData, metadata: movie.metadata))
    }

    static func trackReport(_ track: Track, movie: Movie, source: some ByteSource) throws -> TrackReport {
        let table: SampleTable?
        if movie.isFragmented {
            table = try? parse {
                try SampleTable(boxes: movie.fragmentedTrack(track, in: source).boxes, fileLength: movie.fileLength)
            }
        } else {
            table = try? parse { try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength) }
        }
        let timescale = Double(track.mediaHeader.timescale)
        let mediaTicks = movie.isFragmented ? table?.totalDuration ?? 0 : track.mediaHeader.duration
        let mediaSeconds = timescale > 0 ? Double(mediaTicks) / timescale : 0
        var duration = mediaSeconds
        let edits = track.editList?.entries ?? []
        if !edits.isEmpty, movie.header.timescale > 0 {
            let total = edits.reduce(UInt64(0)) { $0 &+ $1.segmentDuration }
            if total > 0 { duration = Double(total) / Double(movie.header.timescale) }
        }
        let entry = track.sampleDescriptions.entries.first
        let format = entry?.format.description ?? "-"
        let kinds = ["soun": "audio", "vide": "video", "text": "text", "sbtl": "text", "subt": "text",
                     "tmcd": "timecode"]
        var report = TrackReport(
            trackID: track.trackID, handlerType: track.handlerType, kind: kinds[track.handlerType.description] ?? "other",
            format: format, codec: format, duration: duration, sampleCount: table?.sampleCount ?? 0,
            bitrate: bitrate(bytes: table?.totalSampleBytes ?? 0, seconds: mediaSeconds),
            language: track.mediaHeader.languageCode, isEnabled: track.header.isEnabled,
            alternateGroup: Int(track.header.alternateGroup), editList: edits)
        if track.isAudio, let entry {
            do {
                var codec = try AudioCodec(entry: entry, quickTimeLayout: movie.usesQuickTimeLayout)
                if let table { codec.refine(firstPacket: Extraction.firstPacketHeader(table, source: source)) }
                report.codec = codec.codecString
                report.sampleRate = codec.sampleRate
                report.channelCount = codec.channelCount
            } catch {
                report.extractionProblem = "\(error)"
                if let parsed = try? AudioSampleEntry(parsing: entry, quickTimeLayout: movie.usesQuickTimeLayout) {
                    report.sampleRate = parsed.sampleRateV2.flatMap { Int(exactly: $0.rounded()) }
                        ?? Int(parsed.sampleRate >> 16)
                    report.channelCount = Int(parsed.channelCountV2 ?? UInt32(parsed.channelCount))
                }
            }
            let priming = edits.first { !$0.isEmpty }?.mediaTime ?? 0
            report.primingSamples = Int(clamping: priming)
        } else if track.handlerType == .vide, let entry {
            report.codec = VideoCodec.codecString(format: entry.format, entry: entry.bytes)
            if let size = VideoCodec.size(entry: entry.bytes) { (report.width, report.height) = size }
        }
        return report
    }
}

/// Average bits per second, 0 when it cannot be computed (no duration, absurd values).
func bitrate(bytes: UInt64, seconds: Double) -> Int {
    let value = Double(bytes) * 8 / seconds
    guard seconds > 0, value.isFinite, value >= 0, value < 9e18 else { return 0 }
    return Int(value)
}

/// One metadata item: its key (`©nam`, `covr`, `----:MEAN:NAME` for freeform items, or the
/// key name of keys-based metadata, such as `com.apple.quicktime.make`) and its value as
/// text when it has one.
public struct MetadataItem: Sendable, Equatable {
    /// `©nam`, `covr`, `trkn`, `----:com.apple.iTunes:NAME` for a freeform item, or
    /// `com.apple.quicktime.model` for a keys-based one.
    public var key: String
    /// The value as text: UTF-8 text (data type 1), `trkn`/`disk` as "3/12", `gnre` as its
    /// ID3v1 genre name, `cpil` as "true"/"false", `tmpo` and other integers as a number;
    /// nil for images and other binary data.
    public var text: String?
    /// The size of the item's value in bytes (an image's size for `covr`).
    public var valueSize: Int

    /// An item as found in `ilst`.
    public init(key: String, text: String?, valueSize: Int) {
        self.key = key
        self.text = text
        self.valueSize = valueSize
    }
}
