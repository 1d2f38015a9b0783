import ISOBMFF

/// Packages a movie for HTTP streaming by stream copy (issue 31): per audio and video track,
/// an init segment (`ftyp` + `moov`, the track's edit list kept exactly) and CMAF media
/// segments (`styp` + `moof` + `mdat`, `tfdt` continuous), the HLS playlists
/// (`master.m3u8` and one media playlist per track) and a DASH manifest (`manifest.mpd`)
/// over the same segment files. Cuts are planned by ISOBMFF's `SegmentPlanner`; `CODECS` come
/// from its `CodecString`; bandwidths are measured on the segments written (`StreamBandwidth`).
///
/// ```swift
/// let result = try Packager.run(from: "movie.mp4", to: "movie-hls")
/// print(result.targetDuration, result.tracks.map(\.codecs))
/// ```
public enum Packager {
    /// Writes the package of `inputPath` into the folder `outputPath`, published as a whole
    /// (nothing is left behind on failure or cancellation).
    ///
    /// - Parameters:
    ///   - inputPath: the movie to package (MP4, MOV, fragmented or not).
    ///   - outputPath: the folder to create.
    ///   - options: the segment duration, I-frame playlists, a single file per track, overwriting.
    ///   - progress: called after each segment with the sample bytes written so far and in all.
    ///   - isCancelled: polled before each segment and during copies; when it returns true the
    ///     work stops, removes what it wrote and throws ``RemuxError/Code/cancelled``.
    /// - Throws: ``RemuxError``: `.unsupportedInput` for an encrypted track, a video track not
    ///   starting with a sync sample, or no audio or video track; `.unsupportedCodec` for a
    ///   codec whose `CODECS` string cannot be computed; `.invalidInput`/`.truncatedInput` for
    ///   a broken input; `.destinationExists`, `.cannotCreateOutput`, `.ioError`, `.cancelled`.
    @discardableResult
    public static func run(from inputPath: String, to outputPath: String, options: PackageOptions = PackageOptions(),
                           progress: ((RemuxProgress) -> Void)? = nil,
                           isCancelled: @escaping () -> Bool = { false }) throws(RemuxError) -> PackageResult {
        try bridged {
            guard options.segmentSeconds.isFinite, options.segmentSeconds > 0, options.segmentSeconds <= 3600,
                  let segmentDuration = MediaTime(seconds: options.segmentSeconds, timescale: 1_000_000),
                  segmentDuration.ticks > 0 else {
                throw RemuxError(.invalidArgument, "the segment duration must be above 0 and at most 3600 s")
            }
            let input = try InputFile(path: inputPath)
            let (reader, prepared) = try open(input, segmentDuration: segmentDuration)
            let folder = try OutputDirectory(destination: outputPath, overwrite: options.overwrite)
            var written = Written(total: prepared.tracks.reduce(0) { $0 + $1.sampleBytes })
            var streams: [StreamTrack] = []
            for track in prepared.tracks {
                streams.append(try writeSegments(of: track, reader: reader, input: input, folder: folder,
                                                 iFrames: options.iFramePlaylists, singleFile: options.singleFile,
                                                 written: &written,
                                                 progress: progress, isCancelled: isCancelled))
            }
            let (target, texts) = try playlists(of: streams, path: input.path)
            for (name, text) in texts {
                try writeFile(Array(text.utf8), named: name, in: folder, written: &written)
            }
            if isCancelled() { throw RemuxError.cancelled }
            try folder.publish()
            var tracks: [PackageResult.Track] = []
            for (track, stream) in zip(prepared.tracks, streams) {
                let durations = stream.segmentMicroseconds ?? []
                tracks.append(PackageResult.Track(
                    inputID: track.track.id, kind: stream.kind.rawValue, codecs: stream.codecs,
                    segmentCount: stream.segments.count, sampleCount: track.samples.count,
                    seconds: Double(durations.reduce(0, +)) / 1e6,
                    peakBandwidth: StreamBandwidth.peak(sizes: stream.segments.map(\.size), microseconds: durations,
                                                        targetDuration: target) ?? 0,
                    averageBandwidth: stream.averageBandwidth ?? 0))
            }
            return PackageResult(outputPath: folder.destination, tracks: tracks, targetDuration: target,
                                 bytesWritten: written.bytes, fileCount: written.files, warnings: prepared.warnings,
                                 droppedTracks: prepared.dropped)
        }
    }

    /// The target duration and the texts of the package's playlists and manifest, by file name.
    static func playlists(of streams: [StreamTrack], path: String) throws -> (Int, [(String, String)]) {
        guard let target = HLSPlaylist.targetDuration(of: streams) else {
            throw RemuxError(.unsupportedInput, "\(path): a segment time does not fit 64 bits")
        }
        var texts: [(String, String?)] = [("master.m3u8", HLSPlaylist.multivariant(streams, targetDuration: target)),
                                          ("manifest.mpd", DASHManifest.manifest(streams, targetDuration: target) {
                                              "track\($0.id)_$Number$.m4s"
                                          })]
        for stream in streams {
            texts.append((stream.playlistURI, HLSPlaylist.media(stream, targetDuration: target)))
            if let uri = stream.iFramePlaylistURI {
                texts.append((uri, HLSPlaylist.iFrames(stream, targetDuration: target)))
            }
        }
        var result: [(String, String)] = []
        for (name, text) in texts {
            guard let text else {
                throw RemuxError(.unsupportedInput, "\(path): the times of the tracks do not fit a playlist")
            }
            result.append((name, text))
        }
        return (target, result)
    }

    /// The `async` form: it honours the calling task's cancellation, removing what it wrote.
    /// The blocking file I/O runs on a thread of its own, not on the cooperative pool.
    public static func run(from inputPath: String, to outputPath: String, options: PackageOptions = PackageOptions(),
                           progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(RemuxError) -> PackageResult {
        try await onOwnThread { isCancelled throws(RemuxError) in
            try run(from: inputPath, to: outputPath, options: options, progress: progress, isCancelled: isCancelled)
        }
    }

    /// One track ready to write: its samples, planned segments and manifest fields.
    struct PreparedTrack: Sendable {
        var track: MediaTrack
        var samples: PackageSamples
        var description: TrackDescription
        var edits: [EditListBox.Entry]?
        var editTimescale: UInt32
        var segments: [Range<Int>]
        var stream: StreamTrack
        var sampleBytes: UInt64
        /// Added to every composition offset and to the media time of each edit (see
        /// ``compositionShift(minimumOffset:hasEdits:)``).
        var compositionShift: Int64
    }

    struct Prepared {
        var tracks: [PreparedTrack]
        var warnings: [String]
        var dropped: [RemuxResult.DroppedTrack] = []
    }

    /// Bytes and files written so far, for progress and the result.
    struct Written {
        var total: UInt64
        var sampleBytes: UInt64 = 0
        var bytes: UInt64 = 0
        var files = 0
    }

    static let encryptedFormats: Set<String> = ["encv", "enca", "encs", "enct"]

    /// Opens `input` and prepares its tracks: a regular movie through ``MovieOutline``, its
    /// tables read in windows (``PackageSamples``); when the outline or the windowed checks
    /// refuse it (fragmented, damaged, unusual) or preparing fails, the regular way, which
    /// reports as every other command does.
    static func open(_ input: InputFile, segmentDuration: MediaTime) throws -> (MovieReader<InputFile>, Prepared) {
        if let outline = try? MovieOutline(reading: input) {
            let reader = MovieReader(movie: outline.movie, source: input)
            if let prepared = try? prepare(reader, segmentDuration: segmentDuration, outline: outline) {
                return (reader, prepared)
            }
        }
        let reader: MovieReader<InputFile>
        do {
            reader = try MovieReader(reading: input)
        } catch {
            throw FileSignature.explain(RemuxError(bridging: error), source: input).naming(input.path)
        }
        let prepared = try naming(input.path) { try prepare(reader, segmentDuration: segmentDuration, outline: nil) }
        return (reader, prepared)
    }

    /// Checks every track, reads its samples and plans the segments; nothing is written. With
    /// an `outline` (of `reader`'s movie), the tables are checked and walked in the file and
    /// any fault throws (``open(_:segmentDuration:)`` then takes the regular way).
    static func prepare(_ reader: MovieReader<InputFile>, segmentDuration: MediaTime, outline: MovieOutline?) throws
        -> Prepared {
        let movie = reader.movie
        var warnings: [String] = []
        var dropped: [RemuxResult.DroppedTrack] = []
        var kept: [(MediaTrack, PackageSamples, TrackPresentation)] = []
        for (number, track) in reader.tracks.enumerated() {
            guard track.kind == .audio || track.kind == .video else {
                warnings.append("track \(track.id) (\(track.format?.description ?? "?")) was left out: package "
                                + "writes audio and video tracks only")
                continue
            }
            if let format = track.format?.description, encryptedFormats.contains(format) {
                throw RemuxError(.unsupportedInput, "track \(track.id) is encrypted (\(format)): it cannot be "
                                 + "packaged by stream copy")
            }
            let samples: PackageSamples
            do {
                if let outline {
                    guard number < outline.tables.count else { throw RemuxError(.invalidInput, "no outline") }
                    samples = .windowed(try WindowedSamples(track: track.track, tables: outline.tables[number],
                                                            movieBoxRange: movie.movieBoxRange,
                                                            fileLength: movie.fileLength, source: reader.source))
                } else {
                    samples = .indexed(try reader.samples(of: track))
                }
            } catch let error as ISOBMFFError where outline == nil {
                // A damaged track (no readable stsd, tables that contradict one another) is
                // left out and the others packaged (issue 32); a file cut short is not one
                // damaged track: a package copies whole inputs only.
                guard reader.damage(of: track) != nil else { throw RemuxError(bridging: error) }
                let track = RemuxResult.DroppedTrack(track, damage: error)
                dropped.append(track)
                warnings.append(track.warning)
                continue
            }
            guard samples.count > 0 else {
                warnings.append("track \(track.id) has no samples: left out")
                continue
            }
            let presentation = TrackPresentation(of: track.track, in: movie, mediaDuration: samples.totalDuration,
                                                 mediaEnd: samples.presentationEnd)
            warnings += presentation.warnings
            kept.append((track, samples, presentation))
        }
        guard !kept.isEmpty else {
            if let damaged = dropped.first {
                throw RemuxError(.invalidInput, "track \(damaged.trackID), the only audio or video track, cannot be "
                                 + "packaged: \(damaged.reason)")
            }
            throw RemuxError(.unsupportedInput, "the file has no audio or video track to package")
        }
        var planned: [PlannedTrack] = []
        var minimumOffsets: [Int64] = []
        var sampleBytes: [UInt64] = []
        let failure = PlannedTrack.Failure()
        for (track, samples, presentation) in kept {
            // One walk, nothing kept per sample: the planner walks the samples itself.
            var minimumOffset: Int64 = 0
            var bytes: UInt64 = 0
            var hasSync = false
            var startsWithSync = false
            switch samples {
            case .indexed(let index):
                for sample in index {
                    hasSync = hasSync || sample.isSync
                    minimumOffset = min(minimumOffset, sample.compositionOffset)
                    bytes &+= UInt64(sample.size)
                }
                startsWithSync = index.first?.isSync ?? false
            case .windowed(let windowed):
                // Found by WindowedSamples' checks: an stss it accepts is not empty.
                hasSync = true
                minimumOffset = min(0, windowed.compositionOffsetRange.lowerBound)
                bytes = windowed.sampleBytes
                startsWithSync = windowed.startsWithSync
            }
            minimumOffsets.append(minimumOffset)
            sampleBytes.append(bytes)
            if track.kind == .video, !startsWithSync {
                throw RemuxError(.unsupportedInput, "track \(track.id) (video) does not start with a sync sample"
                                 + (hasSync ? "" : " (it has none)") + ": its segments could not be "
                                 + "decoded on their own")
            }
            let origin = try Self.origin(of: presentation, timescale: track.timescale, trackID: track.id)
            let end = samples.totalDuration &+ samples.firstDecodeTime
            planned.append(PlannedTrack(samples: samples, source: reader.source, failure: failure,
                                        timescale: track.timescale, origin: origin, endTime: end))
        }
        let leader = kept.firstIndex { $0.0.kind == .video } ?? 0
        let plans: [[Range<Int>]]
        do {
            plans = try SegmentPlanner.plan(planned, segmentDuration: segmentDuration, leader: leader)
        } catch {
            if let read = failure.error { throw read }
            throw RemuxError(bridging: error)
        }
        if let read = failure.error { throw read }
        var prepared: [PreparedTrack] = []
        var names = Set<String>()
        for ((((track, samples, presentation), segments), minimumOffset), bytes)
            in zip(zip(zip(kept, plans), minimumOffsets), sampleBytes) {
            let description = track.sampleDescriptions.first
            guard let description, let codecs = CodecString.rfc6381(description) else {
                throw RemuxError(.unsupportedCodec, "track \(track.id) (\(track.format?.description ?? "?")): its "
                                 + "codec string (RFC 6381) cannot be computed from its sample entry, so no playlist "
                                 + "could describe it")
            }
            if track.sampleDescriptions.count > 1 {
                warnings.append("track \(track.id) has \(track.sampleDescriptions.count) sample descriptions: the "
                                + "playlists give the first one's codec")
            }
            var soundEntries: [[UInt8]]?
            if track.kind == .audio {
                soundEntries = try CopiedTrack.checkedSoundEntries(of: track.track,
                                                                   quickTimeLayout: movie.usesQuickTimeLayout,
                                                                   quickTimeOutput: false)
            }
            let copied = CopiedTrack.description(of: track.track, quickTimeLayout: movie.usesQuickTimeLayout,
                                                 soundEntries: soundEntries, notes: &warnings)
            let kind: StreamTrack.Kind = track.kind == .video ? .video : .audio
            var stream = StreamTrack(kind: kind, id: track.id, timescale: track.timescale, codecs: codecs,
                                     playlistURI: "track\(track.id).m3u8", initURI: "track\(track.id)_init.mp4",
                                     name: "")
            let language = Self.language(track.language)
            stream.language = language?.tag
            var name = language?.name ?? "Track \(track.id)"
            if names.contains(name) { name += " (\(track.id))" }
            if kind == .audio { names.insert(name) }
            stream.name = name
            if let audio = description.audio {
                if let codec = try? AudioCodec(entry: description.entry, quickTimeLayout: movie.usesQuickTimeLayout) {
                    stream.channelCount = codec.channelCount
                    stream.sampleRate = codec.sampleRate
                } else {
                    stream.channelCount = audio.declaredChannelCount
                    stream.sampleRate = audio.declaredSampleRate
                }
            }
            if let video = description.video {
                stream.width = Int(video.width)
                stream.height = Int(video.height)
                if let colour = ColourDescription(entry: video), colour.videoRange != "SDR" {
                    stream.videoRange = colour.videoRange
                }
                let ticks = samples.totalDuration
                let (frames, overflow) = UInt64(samples.count).multipliedReportingOverflow(by: UInt64(track.timescale))
                if ticks > 0, !overflow {
                    var (a, b) = (frames, ticks)
                    while b != 0 { (a, b) = (b, a % b) }
                    stream.frameRate = (frames / a, ticks / a)
                }
            }
            let shift = compositionShift(minimumOffset: minimumOffset, hasEdits: !presentation.edits.isEmpty)
            let edits = presentation.edits.map { edit in
                var edit = edit
                // Media times and composition offsets of a checked table are far below 2^62.
                if !edit.isEmpty { edit.mediaTime &+= shift }
                return edit
            }
            prepared.append(PreparedTrack(track: track, samples: samples, description: copied,
                                          edits: edits.isEmpty ? nil : edits,
                                          editTimescale: presentation.segmentTimescale, segments: segments,
                                          stream: stream, sampleBytes: bytes, compositionShift: shift))
        }
        return Prepared(tracks: prepared, warnings: warnings, dropped: dropped)
    }

    /// What is added to every composition offset of a track whose offsets go below 0, and to
    /// its edits' media times, so that it presents the same frames at the same times with no
    /// negative offset: the most negative offset, negated, when the track has edits; 0
    /// otherwise (shifting the frames without an edit would delay the track). FFmpeg 5.1
    /// applies its `dts_shift` to an edited fragmented track and shifts its frames (measured
    /// on a Core Media file: every video time 66.7 ms late through the HLS and DASH demuxers
    /// with `trun` version 1); the writer's progressive and fragmented layouts shift alike.
    static func compositionShift(minimumOffset: Int64, hasEdits: Bool) -> Int64 {
        hasEdits && minimumOffset < 0 ? -minimumOffset : 0
    }

    /// The media time presented at 0: the first non-empty edit's media time minus the empty
    /// edits before it, in media ticks; 0 without edits.
    static func origin(of presentation: TrackPresentation, timescale: UInt32, trackID: UInt32) throws -> Int64 {
        var delay: UInt64 = 0
        for edit in presentation.edits {
            guard edit.isEmpty else {
                guard let ticks = rescale(delay, from: presentation.segmentTimescale, to: timescale),
                      let delayTicks = Int64(exactly: ticks) else { break }
                let (origin, overflow) = edit.mediaTime.subtractingReportingOverflow(delayTicks)
                guard !overflow else { break }
                return origin
            }
            delay = delay &+ edit.segmentDuration  // A checked presentation's total fits 64 bits.
        }
        return 0
    }

    /// The `styp` of every media segment (ISO/IEC 14496-12 § 8.16.2; CMAF § 7.3.2.2).
    static let segmentType: [UInt8] = {
        var w = BoxWriter()
        w.box("styp") { w in
            w.write("msdh" as FourCC)
            w.write(UInt32(0))
            for brand: FourCC in ["msdh", "msix", "cmfs"] { w.write(brand) }
        }
        return w.bytes
    }()
}
