import ISOBMFF

/// What `probe` says about a file: brands, layout and every track, read from the box
/// structure (and, for fragmented files, the fragment headers) without reading samples.
public struct MovieReport: Sendable {
    public var majorBrand: FourCC?
    public var minorVersion: UInt32?
    public var compatibleBrands: [FourCC]
    public var isFragmented: Bool
    public var movieBoxOffset: UInt64
    public var movieBoxSize: UInt64
    /// Seconds: the longest track's presented duration.
    public var duration: Double
    public var tracks: [TrackReport]
    /// The chapters (chapter track or Nero `chpl`), empty when there are none.
    public var chapters: [Chapter]
}

public struct TrackReport: Sendable, Equatable {
    public var trackID: UInt32
    public var handlerType: FourCC
    /// "audio", "video", "text", "timecode" or "other".
    public var kind: String
    /// The first sample entry's format (`mp4a`, `avc1`, …).
    public var format: String
    /// The RFC 6381 codec string (`mp4a.40.2`, `avc1.64001f`, `Opus`, `ac-3`).
    public var codec: String
    /// The presented duration in seconds: the edit list's, or else the media's.
    public var duration: Double
    public var sampleCount: Int
    /// Average bits per second over the media duration.
    public var bitrate: Int
    public var language: String?
    public var isEnabled: Bool
    public var alternateGroup: Int
    /// Audio: the sample rate and channel count the codec configuration states (not the
    /// sample entry's often-wrong fields), and the priming the edit list skips.
    public var sampleRate: Int?
    public var channelCount: Int?
    public var primingSamples: Int?
    /// Audio: 0 for the first audio track, as `--track` counts.
    public var audioIndex: Int?
    /// Video: the picture size.
    public var width: Int?
    public var height: Int?
    /// Why the track cannot be extracted, when it is audio that cannot.
    public var extractionProblem: String?
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
            chapters: Chapters.read(movie, source: source))
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
            bitrate: mediaSeconds > 0 ? Int(Double(table?.totalSampleBytes ?? 0) * 8 / mediaSeconds) : 0,
            language: track.mediaHeader.languageCode, isEnabled: track.header.isEnabled,
            alternateGroup: Int(track.header.alternateGroup))
        if track.isAudio, let entry {
            do {
                let codec = try AudioCodec(entry: entry, quickTimeLayout: movie.usesQuickTimeLayout)
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
