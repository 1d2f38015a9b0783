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
    /// Seconds: the longest track's presented duration. In a fragmented file, counted on the
    /// one timeline cuts use (`CutPlan.timelineOffsets(of:)`): from ``startTime`` to where
    /// the last track ends.
    public var duration: Double
    /// Where the file's time 0 lies on the decode clock of its fragments, in seconds: where its
    /// first track starts (`CutPlan.timelineOrigin(of:)`; ffprobe's format `start_time`
    /// but for an AAC priming an edit skips, which FFmpeg 5.1 presents in fragments). 0 for
    /// a regular file.
    public var startTime: Double = 0
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
    /// The presented duration in seconds: the edit list's, or else the media's. In a
    /// fragmented file, where the track ends on the file's one timeline (from the file's
    /// ``MovieReport/startTime``).
    public var duration: Double
    /// Where the track starts, in seconds on the file's decode clock: its first decode time
    /// (a fragment's `tfdt`) plus its empty edits, as ffprobe's stream `start_time` counts
    /// (but for an AAC priming an edit skips). Nil where its samples cannot be read.
    public var startTime: Double?
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
    /// Video: how far the `tkhd` matrix turns the picture clockwise for display (0, 90,
    /// 180 or 270 degrees); nil when the matrix is not a plain rotation.
    public var rotation: Int?
    /// Why the track cannot be extracted, when it is audio that cannot.
    public var extractionProblem: String?
    /// Audio that cannot be extracted as it is (``extractionProblem``) but can with
    /// salvage (the complete part of a truncated file).
    public var extractableWithSalvage = false
    /// What the presentation of the track ignored or bounded (an edit list that overflows or
    /// points outside the media), as extraction warns.
    public var warnings: [String] = []
    /// The edit list (`elst`), in the movie timescale and the media timescale.
    public var editList: [EditListBox.Entry] = []
}

extension AudioExtractor {
    /// Describes the file at `path` and its tracks.
    public static func probe(_ path: String) throws(RemuxError) -> MovieReport {
        try naming(path) { try probe(InputFile(path: path), name: path) }
    }

    /// Describes the movie in `source` and its tracks; `name` is how messages call it.
    public static func probe(_ source: some ByteSource, name: String = "input") throws(RemuxError) -> MovieReport {
        try bridged {
            let movie: Movie
            do {
                movie = try parse { try Movie(reading: source) }
            } catch let error as RemuxError {
                // WAV, MKV, MP3, ADTS, TS: said as extraction says it.
                throw FileSignature.explain(error, source: source)
            }
            var tracks: [TrackReport] = []
            var audioIndex = 0
            for track in movie.tracks {
                var report = try trackReport(track, movie: movie, source: source, name: name)
                if track.isAudio {
                    report.audioIndex = audioIndex
                    audioIndex += 1
                }
                tracks.append(report)
            }
            let startTime = movie.isFragmented ? placeOnTimeline(&tracks, movie: movie, source: source)
                : placeRegular(&tracks, movie: movie)
            // mvhd's duration is a claim: it counts only as far as some track's media reaches.
            // In fragments it counts on no track's clock: the one timeline says.
            let movieDuration = movie.header.timescale == 0 || movie.isFragmented ? 0
                : Double(movie.header.duration) / Double(movie.header.timescale)
            let longest = tracks.map(\.duration).max() ?? 0
            return MovieReport(
                majorBrand: movie.fileType?.majorBrand, minorVersion: movie.fileType?.minorVersion,
                compatibleBrands: movie.fileType?.compatibleBrands ?? [], isFragmented: movie.isFragmented,
                movieBoxOffset: movie.movieBoxRange.lowerBound,
                movieBoxSize: movie.movieBoxRange.upperBound - movie.movieBoxRange.lowerBound,  // A Range: ordered.
                // mvhd may round up a little past the longest track; more than that is a claim the
                // media does not back.
                duration: movieDuration > longest && movieDuration - longest <= 1 ? movieDuration : longest,
                startTime: startTime, tracks: tracks,
                chapters: Chapters.read(movie, source: source),
                metadata: Metadata.items(userData: movie.userData, metadata: movie.metadata))
        }
    }

    /// Places the tracks of a fragmented `movie` on its one timeline, as cuts count
    /// (``CutPlan/timelineOffsets(of:)``): each report's duration becomes where the track ends
    /// from the file's time 0 (its presentation, ``MovieReader/presentation(of:samples:)``,
    /// moved by its offset) and its start where it starts on the decode clock. Returns the
    /// file's time 0 in seconds on that clock; 0 when no track's samples can be read (the
    /// reports then stay on each track's own clock). Walks the fragments once more.
    static func placeOnTimeline(_ reports: inout [TrackReport], movie: Movie, source: some ByteSource) -> Double {
        let reader = MovieReader(movie: movie, source: source)
        var timeline: [CutPlan.TimelineTrack] = []
        var places: [Int] = []
        for (n, report) in reports.enumerated() {
            guard let media = reader.track(id: report.trackID), media.timescale > 0,
                  let samples = try? reader.samples(of: media), samples.count > 0 else { continue }
            timeline.append(.init(samples: samples, presentation: reader.presentation(of: media, samples: samples),
                                  timescale: media.timescale))
            places.append(n)
        }
        guard let origin = CutPlan.timelineOrigin(of: timeline) else { return 0 }
        let offsets = CutPlan.timelineOffsets(of: timeline)
        for ((track, offset), place) in zip(zip(timeline, offsets), places) {
            let timescale = Double(track.timescale)
            reports[place].duration = max(0, track.presentation.seconds - Double(offset) / timescale)
            reports[place].startTime = CutPlan.timelineStart(of: track).map { Double($0) / 1e9 }
        }
        return Double(origin) / 1e9
    }

    /// The start of each track of a regular `movie`: its empty edits, in seconds. Returns 0,
    /// the file's start.
    static func placeRegular(_ reports: inout [TrackReport], movie: Movie) -> Double {
        guard movie.header.timescale > 0 else { return 0 }
        for n in reports.indices {
            var delay: UInt64 = 0
            for edit in reports[n].editList {
                guard edit.isEmpty else { break }
                let (sum, overflow) = delay.addingReportingOverflow(edit.segmentDuration)
                delay = overflow ? .max : sum
            }
            reports[n].startTime = Double(delay) / Double(movie.header.timescale)
        }
        return 0
    }

    /// What extracting audio `track` would do: plans the extraction (everything but the
    /// writing), so that probe reports the very error extraction would hit; when that is a
    /// truncation, plans it again with salvage.
    static func plannedExtraction(of track: Track, source: some ByteSource, name: String)
        -> (extraction: Extraction?, problem: String?, salvageable: Bool)
    {
        do {
            let extraction = try Extraction(source: source, options: ExtractionOptions(track: .trackID(track.trackID)),
                                            name: name)
            return (extraction, nil, false)
        } catch {
            guard (error as? RemuxError)?.code == .truncatedInput,
                  let salvaged = try? Extraction(source: source, options: ExtractionOptions(
                    track: .trackID(track.trackID), salvage: true), name: name)
            else { return (nil, "\(error)", false) }
            return (salvaged, "\(error)", true)
        }
    }

    /// One track's report. `describingCutTracks`: a non-audio track of a file cut short is
    /// described by the samples wholly inside the file (probe); false keeps the track's own
    /// claim (`mdhd`, edits), as a tag edit places chapters on the movie players show.
    static func trackReport(_ track: Track, movie: Movie, source: some ByteSource, name: String,
                            describingCutTracks: Bool = true) throws -> TrackReport {
        var table: SampleTable?
        var planned: (extraction: Extraction?, problem: String?, salvageable: Bool) = (nil, nil, false)
        if track.isAudio {
            planned = plannedExtraction(of: track, source: source, name: name)
            table = planned.extraction?.table
        }
        var truncation: String?
        if table == nil {
            // The one track index: the tables extraction and remux would read, or none. A
            // track of a regular file cut short is described by its samples wholly inside
            // the file (the salvage rule, as for audio), and says so (issue 32).
            let reader = MovieReader(movie: movie, source: source)
            do {
                let tables = try reader.sampleTable(of: track)
                table = tables.table
                if let cut = tables.incompleteFragment {
                    truncation = "the file ends at byte \(movie.fileLength), inside the fragment at byte \(cut.offset): "
                        + "described by its \(tables.table.sampleCount) samples before the cut"
                }
            } catch {
                if describingCutTracks, (error as? ISOBMFFError)?.code == .invalidSampleTable,
                   let whole = try? reader.wholeSampleTable(of: track) {
                    table = whole
                    truncation = "the file ends at byte \(movie.fileLength): described by the \(whole.sampleCount) of "
                        + "its \(track.declaredSampleCount) samples that lie wholly inside it"
                } else if !track.isAudio {
                    // Shown as such (issue 32); the other tracks are described as usual.
                    truncation = "its boxes are damaged: \(error)"
                }
            }
        }
        let timescale = Double(track.mediaHeader.timescale)
        // What the media holds, as extraction counts it; the mdhd claim only when the tables
        // cannot be read.
        var mediaTicks = table.map {
            Extraction.mediaDuration(of: track, table: $0, movie: movie, salvage: planned.extraction?.salvage)
        } ?? (movie.isFragmented ? 0 : track.mediaHeader.duration)
        if mediaTicks == 0, !movie.isFragmented, (table?.sampleCount ?? 0) > 0 {
            // Samples that all last 0 ticks (a GoPro fdsc track) say nothing of the media's
            // length: the mdhd claim stands, as FFmpeg keeps it (mov_read_stts bounds the
            // duration by the samples' total only when that is not 0).
            mediaTicks = track.mediaHeader.duration
        }
        let mediaSeconds = timescale > 0 ? Double(mediaTicks) / timescale : 0
        // Where the media's presentation ends: what its samples hold, after their decode
        // times end with B-frames (the largest composition offset later).
        let mediaEnd = table?.presentationEnd
        // The one rule extraction and remux apply (an iTunSMPB item where the track has no
        // edit list).
        let presentation = TrackPresentation(of: track, in: movie, mediaDuration: mediaTicks, mediaEnd: mediaEnd)
        let duration = presentedSeconds(presentation, input: track.editList?.entries ?? [],
                                        movieTimescale: movie.header.timescale,
                                        mediaTimescale: track.mediaHeader.timescale,
                                        mediaEnd: max(mediaEnd ?? 0, mediaTicks))
        let edits = track.editList?.entries ?? []
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
        if track.isAudio {
            if let entry {
                do {
                    var codec = try AudioCodec(entry: entry, quickTimeLayout: movie.usesQuickTimeLayout)
                    if let table { codec.refine(firstPacket: Extraction.firstPacketHeader(table, source: source)) }
                    report.codec = codec.codecString
                    report.sampleRate = codec.sampleRate
                    report.channelCount = codec.channelCount
                } catch {
                    report.extractionProblem = "\(error)"
                    if let parsed = try? AudioSampleEntry(parsing: entry, quickTimeLayout: movie.usesQuickTimeLayout) {
                        (report.sampleRate, report.channelCount) = Self.entryFields(
                            parsed, format: entry.format, mediaTimescale: track.mediaHeader.timescale)
                    }
                }
            }
            report.primingSamples = Int(clamping: presentation.priming)
            if let problem = planned.problem, report.extractionProblem == nil {
                report.extractionProblem = problem
            }
            report.extractableWithSalvage = planned.salvageable
            report.warnings = planned.extraction?.presentationWarnings ?? presentation.warnings
        }
        if let truncation { report.warnings.append(truncation) }
        if !track.isAudio, track.handlerType == .vide, let entry {
            report.codec = VideoCodec.codecString(format: entry.format, entry: entry.bytes)
            report.rotation = track.header.rotation
            if let size = VideoCodec.size(format: entry.format, entry: entry.bytes) { (report.width, report.height) = size }
        }
        return report
    }
}

extension AudioExtractor {
    /// ``TrackPresentation/seconds`` without its rounding: an edit that runs past the
    /// media's end is fitted to it in the movie timescale (1/600 s, 1 ms), so a track whose
    /// edit rounds its media's length up (2740 ms of 120832/44100 s) would be reported up to
    /// half a movie tick long. Each media edit lasts its segment duration or, where the
    /// media ends first, up to the media's end counted in the media's own timescale; empty
    /// edits last their duration. The presentation's seconds where
    /// the edits were ignored or made from `iTunSMPB`.
    static func presentedSeconds(_ presentation: TrackPresentation, input: [EditListBox.Entry],
                                 movieTimescale: UInt32, mediaTimescale: UInt32, mediaEnd: UInt64) -> Double {
        guard !presentation.isFromGaplessInfo, !presentation.edits.isEmpty, presentation.edits.count == input.count,
              movieTimescale > 0, mediaTimescale > 0 else { return presentation.seconds }
        var total = 0.0
        for (edit, original) in zip(presentation.edits, input) {
            let segment = Double(edit.segmentDuration) / Double(movieTimescale)
            guard !edit.isEmpty, let start = UInt64(exactly: edit.mediaTime), start < mediaEnd else {
                total += segment
                continue
            }
            let available = Double(mediaEnd - start) / Double(mediaTimescale)  // start < mediaEnd.
            // Fitted (or run to the media's end): the media's end exactly; else the edit's
            // own length, never past the media's end.
            total += edit.segmentDuration != original.segmentDuration ? available : min(segment, available)
        }
        return total
    }

    /// The sample rate and channel count of an audio entry whose codec extraction does not
    /// read (AMR, IAMF, PCM, …), from the entry's fields, with two fixes FFmpeg applies too
    /// (`mov_finalize_stsd_codec`): AMR is mono at a fixed rate, whatever the entry's template
    /// fields say (3GPP TS 26.244 § 6.5: `samr` and `sawb` carry ChannelCount 2, which is
    /// ignored; AMR-NB is 8000 Hz, AMR-WB 16000 Hz), and a rate field of 0 (an `iamf` entry:
    /// the rate is in its configuration OBUs) is the media timescale.
    static func entryFields(_ entry: AudioSampleEntry, format: FourCC, mediaTimescale: UInt32)
        -> (sampleRate: Int, channels: Int)
    {
        switch format {
        case "samr": return (8000, 1)
        case "sawb": return (16000, 1)
        default: break
        }
        let rate = entry.declaredSampleRate
        let channels = entry.declaredChannelCount
        return (rate == 0 && mediaTimescale > 1 ? Int(mediaTimescale) : rate, channels)
    }
}

/// Average bits per second, 0 when it cannot be computed (no duration, absurd values).
func bitrate(bytes: UInt64, seconds: Double) -> Int {
    guard seconds > 0 else { return 0 }
    return Int(clamping: max(0, MediaTime.integer(Double(bytes) * 8 / seconds, rounding: .down) ?? 0))
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
