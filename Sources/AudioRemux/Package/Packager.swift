import ISOBMFF

/// What ``Packager/run(from:to:options:progress:isCancelled:)`` writes.
public struct PackageOptions: Sendable {
    /// The wanted segment duration in seconds: each video segment starts at the first sync
    /// sample at or after a multiple of it.
    public var segmentSeconds: Double = 6
    /// Write an I-frame playlist beside each video track's media playlist.
    public var iFramePlaylists = false
    /// One file per track (`trackN.mp4`: init segment, `sidx`, the segments), addressed by
    /// byte ranges (`EXT-X-BYTERANGE`, DASH `SegmentBase`) instead of a file per segment.
    public var singleFile = false
    /// Replace an existing output folder (only one package wrote: see docs/cli.md).
    public var overwrite = false

    /// The defaults: 6 s segments, no I-frame playlists.
    public init() {}
}

/// What ``Packager/run(from:to:options:progress:isCancelled:)`` wrote.
public struct PackageResult: Sendable {
    /// One packaged track.
    public struct Track: Sendable, Equatable {
        /// The track ID in the input.
        public var inputID: UInt32
        /// `audio` or `video`.
        public var kind: String
        /// The RFC 6381 codec string the playlists give.
        public var codecs: String
        /// Its media segments.
        public var segmentCount: Int
        /// Samples copied.
        public var sampleCount: Int
        /// The media duration of its segments, in seconds.
        public var seconds: Double
        /// The HLS peak segment bit rate, bits per second.
        public var peakBandwidth: UInt64
        /// Its bit rate over all segments.
        public var averageBandwidth: UInt64
    }

    /// The output folder.
    public var outputPath: String
    /// The tracks packaged, in input order.
    public var tracks: [Track]
    /// The `EXT-X-TARGETDURATION` of every media playlist.
    public var targetDuration: Int
    /// Bytes written in all.
    public var bytesWritten: UInt64
    /// Files written.
    public var fileCount: Int
    /// Tracks left out and other things worth saying.
    public var warnings: [String]
    /// The input's tracks left out because their boxes are damaged (issue 32), each also
    /// named in ``warnings``.
    public var droppedTracks: [RemuxResult.DroppedTrack] = []
}

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
                           progress: ((MuxProgress) -> Void)? = nil,
                           isCancelled: @escaping () -> Bool = { false }) throws -> PackageResult {
        guard options.segmentSeconds.isFinite, options.segmentSeconds > 0, options.segmentSeconds <= 3600,
              let segmentDuration = MediaTime(seconds: options.segmentSeconds, timescale: 1_000_000),
              segmentDuration.ticks > 0 else {
            throw RemuxError(.invalidArgument, "the segment duration must be above 0 and at most 3600 s")
        }
        let input = try InputFile(path: inputPath)
        let reader: MovieReader<InputFile>
        do {
            reader = try MovieReader(reading: input)
        } catch let error as ISOBMFFError {
            throw FileSignature.explain(RemuxError(error), source: input).naming(input.path)
        }
        let prepared = try naming(input.path) { try prepare(reader, segmentDuration: segmentDuration) }
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
        if isCancelled() { throw RemuxError(.cancelled, "cancelled") }
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
                           progress: (@Sendable (MuxProgress) -> Void)? = nil) async throws -> PackageResult {
        try await onOwnThread { isCancelled in
            try run(from: inputPath, to: outputPath, options: options, progress: progress, isCancelled: isCancelled)
        }
    }

    /// One track ready to write: its samples, planned segments and manifest fields.
    struct PreparedTrack: Sendable {
        var track: MediaTrack
        var samples: SampleIndex
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

    /// Checks every track, reads its samples and plans the segments; nothing is written.
    static func prepare(_ reader: MovieReader<InputFile>, segmentDuration: MediaTime) throws -> Prepared {
        let movie = reader.movie
        var warnings: [String] = []
        var dropped: [RemuxResult.DroppedTrack] = []
        var kept: [(MediaTrack, SampleIndex, TrackPresentation)] = []
        for track in reader.tracks {
            guard track.kind == .audio || track.kind == .video else {
                warnings.append("track \(track.id) (\(track.format?.description ?? "?")) was left out: package "
                                + "writes audio and video tracks only")
                continue
            }
            if let format = track.format?.description, encryptedFormats.contains(format) {
                throw RemuxError(.unsupportedInput, "track \(track.id) is encrypted (\(format)): it cannot be "
                                 + "packaged by stream copy")
            }
            let samples: SampleIndex
            do {
                samples = try reader.samples(of: track)
            } catch let error as ISOBMFFError {
                // A damaged track (no readable stsd, tables that contradict one another) is
                // left out and the others packaged (issue 32); a file cut short is not one
                // damaged track: a package copies whole inputs only.
                guard reader.damage(of: track) != nil else { throw RemuxError(error) }
                let reason = "its boxes are damaged: \(error.description)"
                dropped.append(RemuxResult.DroppedTrack(trackID: track.id, reason: reason))
                warnings.append("track \(track.id)\(track.format.map { " (\($0))" } ?? "") was dropped: \(reason)")
                continue
            }
            guard samples.count > 0 else {
                warnings.append("track \(track.id) has no samples: left out")
                continue
            }
            let presentation = reader.presentation(of: track, samples: samples)
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
        var planned: [SegmentPlanner.Track] = []
        var minimumOffsets: [Int64] = []
        for (track, samples, presentation) in kept {
            var decodeTimes: [UInt64] = []
            var isSync: [Bool] = []
            var minimumOffset: Int64 = 0
            var offsets: [Int64] = []
            decodeTimes.reserveCapacity(samples.count)
            isSync.reserveCapacity(samples.count)
            for sample in samples {
                decodeTimes.append(sample.decodeTime)
                isSync.append(sample.isSync)
                minimumOffset = min(minimumOffset, sample.compositionOffset)
                if sample.compositionOffset != 0 || !offsets.isEmpty {
                    if offsets.isEmpty { offsets = Array(repeating: 0, count: decodeTimes.count - 1) }
                    offsets.append(sample.compositionOffset)
                }
            }
            minimumOffsets.append(minimumOffset)
            if track.kind == .video, !(isSync.first ?? false) {
                throw RemuxError(.unsupportedInput, "track \(track.id) (video) does not start with a sync sample"
                                 + (isSync.contains(true) ? "" : " (it has none)") + ": its segments could not be "
                                 + "decoded on their own")
            }
            let origin = try Self.origin(of: presentation, timescale: track.timescale, trackID: track.id)
            let end = samples.totalDuration &+ (decodeTimes.first ?? 0)
            planned.append(SegmentPlanner.Track(timescale: track.timescale, origin: origin, decodeTimes: decodeTimes,
                                                isSync: isSync, endTime: end, compositionOffsets: offsets))
        }
        let leader = kept.firstIndex { $0.0.kind == .video } ?? 0
        let plans: [[Range<Int>]]
        do {
            plans = try SegmentPlanner.plan(planned, segmentDuration: segmentDuration, leader: leader)
        } catch {
            throw RemuxError(.unsupportedInput, "the segments cannot be planned: \(error)")
        }
        var prepared: [PreparedTrack] = []
        var names = Set<String>()
        for (((track, samples, presentation), segments), minimumOffset) in zip(zip(kept, plans), minimumOffsets) {
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
            var bytes: UInt64 = 0
            for sample in samples { bytes &+= UInt64(sample.size) }
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

    /// What one media segment holds, found as it is streamed.
    struct SegmentFacts {
        var decodeTime: UInt64 = 0
        var duration: UInt64 = 0
        var sampleBytes: UInt64 = 0
        /// The earliest presentation time of its samples (for a `sidx`).
        var earliestPresentation: Int64 = 0
        var startsWithSync = false
        /// Its size: `styp` + `moof` + `mdat`.
        var size: UInt64 = 0
        /// From its start to the end of its first sample: `styp`, `moof`, the `mdat` header
        /// and the key frame (an I-frame playlist's range).
        var keyFrameEnd: UInt64 = 0
    }

    /// Where streamed bytes go: a file being written, or nowhere (a first pass that only
    /// measures, or ``SegmentSource`` recording the segment as ``parts``). Counts the bytes
    /// and remembers the size of each `write` (`styp`, then the fragment's `moof` and `mdat`
    /// header).
    struct PackageSink: MovieSink {
        var file: MovieFileSink?
        var count: UInt64 = 0
        var writes: [UInt64] = []
        /// When not nil, what was performed: written bytes and copied ranges of the input,
        /// adjacent ones joined.
        var parts: [SegmentPart]?

        mutating func perform(_ operation: MuxOperation) throws {
            if case .write(let bytes) = operation { writes.append(UInt64(bytes.count)) }
            if parts != nil { record(operation) }
            try file?.perform(operation)
            count &+= operation.byteCount
        }

        mutating func record(_ operation: MuxOperation) {
            guard var list = parts else { return }
            parts = nil  // Not copied on append.
            switch (operation, list.last) {
            case (.write(let bytes), .bytes(var last)?):
                list.removeLast()
                last.append(contentsOf: bytes)
                list.append(.bytes(last))
            case (.write(let bytes), _):
                list.append(.bytes(Array(bytes)))
            case let (.copy(_, offset, count), .range(start, length)?) where start &+ length == offset:
                list[list.count - 1] = .range(offset: start, count: length &+ count)
            case let (.copy(_, offset, count), _):
                list.append(.range(offset: offset, count: count))
            }
            parts = list
        }
    }

    /// The writer of one track's segments, its track number in it, set to start at the
    /// track's first decode time.
    static func segmentWriter(_ prepared: PreparedTrack, movieTimescale: UInt32) throws -> (MovieWriter, UInt32) {
        var writer = MovieWriter(movieTimescale: movieTimescale)
        writer.fileType = FileTypeBox(majorBrand: "iso6", minorVersion: 0,
                                      compatibleBrands: ["iso6", "cmfc", "dash", "msdh", "msix"])
        let track = try writer.addTrack(prepared.description)
        try writer.setEdits(prepared.edits, for: track)
        if let start = prepared.samples.first?.decodeTime { try writer.setFirstDecodeTime(start, for: track) }
        return (writer, track)
    }

    /// Streams the init segment of `prepared` into `initSink()`'s sink and each media segment
    /// (`styp` + `moof` + `mdat`) into `segmentSink(k)`'s, calling back after each: the one
    /// loop behind separate files, a single file, the single file's measuring pass and
    /// ``SegmentSource``'s plan, so that all hold the same bytes.
    static func streamTrack(_ prepared: PreparedTrack, movieTimescale: UInt32, isCancelled: () -> Bool,
                            initSink: () throws -> PackageSink, initFinished: (PackageSink) throws -> Void,
                            segmentSink: (Int) throws -> PackageSink,
                            segmentFinished: (Int, PackageSink, SegmentFacts) throws -> Void) throws {
        var (writer, track) = try segmentWriter(prepared, movieTimescale: movieTimescale)
        var head = try initSink()
        try writer.writeFragment(into: &head)  // No samples yet: the init segment alone.
        try initFinished(head)
        var iterator = prepared.samples.makeIterator(from: 0)
        for (number, range) in prepared.segments.enumerated() {
            if isCancelled() { throw RemuxError(.cancelled, "cancelled") }
            var sink = try segmentSink(number)
            let facts = try writeSegment(range.count, of: prepared, from: &iterator, writer: &writer, track: track,
                                         into: &sink)
            try segmentFinished(number, sink, facts)
        }
    }

    /// Appends the next `count` samples of `iterator` to `writer` and streams them as one
    /// media segment (`styp` + `moof` + `mdat`) into `sink`: every segment the package and
    /// ``SegmentSource`` give is made here.
    static func writeSegment(_ count: Int, of prepared: PreparedTrack, from iterator: inout SampleIndex.Iterator,
                             writer: inout MovieWriter, track: UInt32, into sink: inout PackageSink) throws
        -> SegmentFacts {
        var facts = SegmentFacts()
        var firstSize: UInt64 = 0
        var first = true
        for _ in 0..<count {
            guard var sample = iterator.next() else { break }
            sample.compositionOffset &+= prepared.compositionShift  // |offset| < 2^32 each.
            if first {
                facts.decodeTime = sample.decodeTime
                facts.startsWithSync = sample.isSync
                facts.earliestPresentation = sample.presentationTime
                firstSize = UInt64(sample.size)
                first = false
            }
            facts.earliestPresentation = min(facts.earliestPresentation, sample.presentationTime)
            facts.duration &+= UInt64(sample.duration)
            facts.sampleBytes &+= UInt64(sample.size)
            try writer.append(sample, from: 0, to: track)
        }
        sink.writes = []
        let start = sink.count
        try sink.perform(.write(segmentType[...]))
        try writer.writeFragment(into: &sink)
        facts.size = sink.count - start
        if sink.writes.count >= 3 {
            facts.keyFrameEnd = sink.writes[0] + sink.writes[1] + sink.writes[2] + firstSize
        }
        return facts
    }

    /// Writes the init segment and the media segments of one track, as files of their own or
    /// (`singleFile`) one file `trackN.mp4`: its init segment, a `sidx` indexing every segment
    /// (ISO/IEC 14496-12 § 8.16.3), then the segments, the same bytes as separate files; a
    /// first pass measures them. Returns the track's manifest entry.
    static func writeSegments(of prepared: PreparedTrack, reader: MovieReader<InputFile>, input: InputFile,
                              folder: OutputDirectory, iFrames: Bool, singleFile: Bool, written: inout Written,
                              progress: ((MuxProgress) -> Void)?, isCancelled: @escaping () -> Bool) throws
        -> StreamTrack {
        let id = prepared.track.id
        let movieTimescale = prepared.edits == nil ? reader.movie.header.timescale : prepared.editTimescale
        var done = written
        func report(_ facts: SegmentFacts) {
            done.sampleBytes &+= facts.sampleBytes
            progress?(MuxProgress(bytesDone: done.bytes, sampleBytesDone: done.sampleBytes,
                                  sampleBytesTotal: done.total))
        }
        var initSize: UInt64 = 0
        var measured: [SegmentFacts] = []
        let result: (stream: StreamTrack, index: [UInt8])
        if !singleFile {
            try streamTrack(prepared, movieTimescale: movieTimescale, isCancelled: isCancelled, initSink: {
                PackageSink(file: try MovieFileSink(destination: folder.path(of: prepared.stream.initURI),
                                                    overwrite: false, sources: [input]))
            }, initFinished: { sink in
                initSize = sink.count
                try publish(sink, &done)
            }, segmentSink: { number in
                PackageSink(file: try MovieFileSink(destination: folder.path(of: segmentName(id, number)),
                                                    overwrite: false, sources: [input]))
            }, segmentFinished: { _, sink, facts in
                try publish(sink, &done)
                measured.append(facts)
                report(facts)
            })
            result = try layout(prepared, initSize: initSize, segments: measured, singleFile: false, iFrames: iFrames)
        } else {
            // First pass: sizes only, nothing written.
            try streamTrack(prepared, movieTimescale: movieTimescale, isCancelled: isCancelled,
                            initSink: { PackageSink() }, initFinished: { initSize = $0.count },
                            segmentSink: { _ in PackageSink() },
                            segmentFinished: { _, _, facts in measured.append(facts) })
            result = try layout(prepared, initSize: initSize, segments: measured, singleFile: true, iFrames: iFrames)
            let file = try MovieFileSink(destination: folder.path(of: result.stream.initURI), overwrite: false,
                                         sources: [input])
            var total: UInt64 = 0
            try streamTrack(prepared, movieTimescale: movieTimescale, isCancelled: isCancelled,
                            initSink: { PackageSink(file: file) }, initFinished: { sink in
                                var sink = sink
                                try sink.perform(.write(result.index[...]))
                                total = sink.count
                            }, segmentSink: { _ in PackageSink(file: file) },
                            segmentFinished: { number, _, facts in
                                guard number < measured.count, measured[number].size == facts.size else {
                                    throw RemuxError(.ioError, "track \(id): segment \(number + 1) came out "
                                                     + "differently on the second pass")
                                }
                                total += facts.size
                                report(facts)
                            })
            try file.publish()
            done.bytes &+= total
            done.files += 1
        }
        written = done
        return result.stream
    }

    /// The name of media segment `number` (0-based) of track `id` in the default layout.
    static func segmentName(_ id: UInt32, _ number: Int) -> String {
        "track\(id)_\(number + 1).m4s"
    }

    /// The manifest entry of `prepared` from what its init segment (`initSize` bytes) and
    /// media segments hold, measured or written: a file per segment, or (`singleFile`) one
    /// file `trackN.mp4` holding the init segment, the returned `sidx` and the segments, each
    /// addressed by its byte range; with `iFrames`, a video track's key-frame ranges and
    /// I-frame playlist. The one layout rule of the package and of ``SegmentSource``.
    static func layout(_ prepared: PreparedTrack, initSize: UInt64, segments: [SegmentFacts], singleFile: Bool,
                       iFrames: Bool) throws -> (stream: StreamTrack, index: [UInt8]) {
        var stream = prepared.stream
        let id = prepared.track.id
        var keyFrames: [Range<UInt64>] = []
        var index: [UInt8] = []
        if singleFile {
            index = try segmentIndex(segments, timescale: prepared.track.timescale)
            let name = "track\(id).mp4"
            var offset = initSize + UInt64(index.count)
            stream.initURI = name
            stream.initRange = 0..<initSize
            stream.indexRange = initSize..<offset
            for facts in segments {
                // Each segment < 2^31 bytes (checked by segmentIndex), a few thousand of them.
                stream.segments.append(StreamSegment(decodeTime: facts.decodeTime, duration: facts.duration, uri: name,
                                                     byteRange: offset..<(offset + facts.size), size: facts.size))
                keyFrames.append(offset..<(offset + facts.keyFrameEnd))
                offset += facts.size
            }
        } else {
            for (number, facts) in segments.enumerated() {
                stream.segments.append(StreamSegment(decodeTime: facts.decodeTime, duration: facts.duration,
                                                     uri: segmentName(id, number), size: facts.size))
                keyFrames.append(0..<facts.keyFrameEnd)
            }
        }
        if iFrames, stream.kind == .video {
            stream.keyFrameRanges = keyFrames
            stream.iFramePlaylistURI = "track\(id)_iframes.m3u8"
        }
        return (stream, index)
    }

    static func publish(_ sink: PackageSink, _ written: inout Written) throws {
        try sink.file?.publish()
        written.bytes &+= sink.count
        written.files += 1
    }

    /// The `sidx` of a single file (version 1): one media reference per segment, its size and
    /// duration, starting with a SAP of type 1 when its first sample is a sync sample; the
    /// first segment follows it directly (`first_offset` 0).
    static func segmentIndex(_ segments: [SegmentFacts], timescale: UInt32) throws -> [UInt8] {
        guard segments.count <= Int(UInt16.max) else {
            throw RemuxError(.unsupportedInput, "\(segments.count) segments exceed the 65535 references of one sidx: "
                             + "use longer segments")
        }
        for segment in segments where segment.size >= 1 << 31 || segment.duration > UInt64(UInt32.max) {
            throw RemuxError(.unsupportedInput, "a segment of \(segment.size) bytes or \(segment.duration) ticks is "
                             + "too large for a sidx reference: use shorter segments")
        }
        var w = BoxWriter()
        w.fullBox("sidx", version: 1, flags: 0) { w in
            w.write(UInt32(1))  // reference_ID: the track, the only one of its init segment.
            w.write(timescale)
            w.write(UInt64(clamping: max(0, segments.first?.earliestPresentation ?? 0)))
            w.write(UInt64(0))  // first_offset
            w.write(UInt16(0))  // reserved
            w.write(UInt16(segments.count))  // At most 65535: checked above.
            for segment in segments {
                w.write(UInt32(segment.size))  // reference_type 0 (media); < 2^31, checked above.
                w.write(UInt32(segment.duration))
                w.write(segment.startsWithSync ? UInt32(0x9000_0000) : 0)
            }
        }
        return w.bytes
    }

    /// Writes `bytes` as file `name` in `folder`.
    static func writeFile(_ bytes: [UInt8], named name: String, in folder: OutputDirectory,
                          written: inout Written) throws {
        var sink = PackageSink(file: try MovieFileSink(destination: folder.path(of: name), overwrite: false,
                                                       sources: []))
        try sink.perform(.write(bytes[...]))
        try publish(sink, &written)
    }

    /// ISO 639-2 codes as BCP 47 tags (the ISO 639-1 code where there is one, RFC 5646
    /// § 2.2.1) and names for the `EXT-X-MEDIA` `NAME`; an unlisted code is kept as it is
    /// (a valid BCP 47 primary subtag), `und` and unknown give nil.
    static func language(_ code: String?) -> (tag: String, name: String)? {
        guard let code, code != "und", code.count == 3 else { return nil }
        let table: [String: (String, String)] = [
            "eng": ("en", "English"), "fra": ("fr", "Français"), "fre": ("fr", "Français"),
            "deu": ("de", "Deutsch"), "ger": ("de", "Deutsch"), "spa": ("es", "Español"), "ita": ("it", "Italiano"),
            "por": ("pt", "Português"), "nld": ("nl", "Nederlands"), "dut": ("nl", "Nederlands"),
            "jpn": ("ja", "日本語"), "zho": ("zh", "中文"), "chi": ("zh", "中文"), "kor": ("ko", "한국어"),
            "rus": ("ru", "Русский"), "pol": ("pl", "Polski"), "swe": ("sv", "Svenska"), "dan": ("da", "Dansk"),
            "nor": ("no", "Norsk"), "fin": ("fi", "Suomi"), "tur": ("tr", "Türkçe"), "ara": ("ar", "العربية"),
            "heb": ("he", "עברית"), "hin": ("hi", "हिन्दी"), "ces": ("cs", "Čeština"), "cze": ("cs", "Čeština"),
            "ell": ("el", "Ελληνικά"), "gre": ("el", "Ελληνικά"), "hun": ("hu", "Magyar"),
        ]
        if let (tag, name) = table[code] { return (tag, name) }
        return (code, code)
    }
}
