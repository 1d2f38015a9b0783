import ISOBMFF

/// Options for ``BackgroundMusic/mux(video:music:to:options:progress:isCancelled:)-(String,_,_,_,_,_)`` and its
/// other forms.
public struct MuxOptions: Sendable {
    /// Where the music starts, in seconds from the start of the video.
    public var musicOffset: Double
    /// Keep the video's own audio as a second, disabled audio track (an alternative to
    /// the music, in the same alternate group).
    public var keepOriginalAudio: Bool
    /// Repeat the clips until the video ends.
    public var loop: Bool
    /// Join the clips sample-exactly with one edit per clip, for players that honour
    /// multi-entry edit lists (AVFoundation/QuickTime); others may stop or gap. Off by
    /// default: the clips are joined at packet level under one edit, which plays everywhere.
    public var exactSeams: Bool
    /// Keep the video's tags, cover art and metadata keys (make, model, location, creation
    /// date). On by default.
    public var keepMetadata: Bool
    /// Tag changes made to the output (after ``keepMetadata`` kept or dropped the video's).
    public var tags = TagChanges()
    /// Replace an existing destination (atomically). Off by default: an existing file is
    /// never touched.
    public var overwrite: Bool
    /// The size of the copy buffer; memory use does not grow with the files.
    public var bufferSize: Int

    /// Options with safe defaults: music from the start, the video's audio dropped, no loop,
    /// packet seams, the video's metadata kept, an existing destination left alone, a 1 MiB
    /// buffer (raised to at least 64 KiB).
    public init(musicOffset: Double = 0, keepOriginalAudio: Bool = false, loop: Bool = false,
                exactSeams: Bool = false, keepMetadata: Bool = true, overwrite: Bool = false,
                bufferSize: Int = 1 << 20) {
        self.musicOffset = musicOffset
        self.keepOriginalAudio = keepOriginalAudio
        self.loop = loop
        self.exactSeams = exactSeams
        self.keepMetadata = keepMetadata
        self.overwrite = overwrite
        self.bufferSize = max(bufferSize, 64 << 10)
    }
}

/// What ``BackgroundMusic`` produced.
public struct MuxResult: Sendable, Equatable {
    /// One music clip and how often it was placed.
    public struct ClipUse: Sendable, Equatable {
        /// The clip's path (or "clip 1", … for byte sources).
        public var path: String
        /// How many times the clip plays: more than 1 when looped, 0 when the video ended
        /// before it.
        public var plays: Int
    }

    /// Where the output was published.
    public var outputPath: String
    /// How many video tracks were copied.
    public var videoTrackCount: Int
    /// The clips in the order given, each with how many times it plays.
    public var clips: [ClipUse]
    /// How many clips were placed in all (a clip looped N times counts N times).
    public var clipsPlaced: Int { clips.reduce(0) { $0 + $1.plays } }
    /// Seconds.
    public var videoDuration: Double
    /// The music track's presented duration in seconds, counted from the start of the video
    /// (``MuxOptions/musicOffset`` included).
    public var musicDuration: Double
    /// Whether the clips were joined sample-exactly (``MuxOptions/exactSeams``).
    public var exactSeams: Bool
    /// The largest distance, in seconds, between where a clip starts on the music's
    /// timeline and where it belongs (0 for exact seams or a single clip): at most half a
    /// packet, and never growing from seam to seam.
    public var largestSeamError: Double
    /// What of the video was not carried over: its own audio, other tracks, metadata that
    /// could not be copied safely. One sentence each.
    public var dropped: [String]
    /// The size of the output file.
    public var bytesWritten: UInt64
    /// What the user should know that is not something dropped for being unwanted: a chapter
    /// list too long for Nero's `chpl`, a damaged track left out. One sentence each.
    public var warnings: [String] = []
    /// The video's tracks that would have been copied (video tracks, and the original audio
    /// when kept) but were left out because their boxes are damaged, each with why; the rest
    /// is muxed as if they were not there (issue 32). Each also has a line in ``warnings``.
    public var droppedTracks: [RemuxResult.DroppedTrack] = []
}

/// Puts music under a video by stream copy: the video track(s) unchanged, and one audio
/// track made of the clips back to back, cut where the video ends.
///
/// The output's movie timescale is the audio's sample rate, so the music's edits are exact
/// without decoding. By default the clips are joined at packet level under **one edit**:
/// each seam drops the next clip's priming packets but its last one, which stands in for
/// the previous clip's last packet (it gives the next clip's first frame its decoder
/// pre-roll and decodes to the previous clip fading out), and keeps as much of the
/// previous clip as puts the next one within half a packet of where it belongs, the error
/// never accumulating; the edit skips the first clip's priming and cuts the last clip at
/// the video's end to the sample. Every player plays one edit. With
/// ``MuxOptions/exactSeams`` each clip has its own edit, exact to the sample, for players
/// that honour multi-entry edit lists (AVFoundation/QuickTime); others may stop or gap.
///
/// Clips must share one coding (codec, sample rate, channels and decoder configuration):
/// players do not reconfigure a decoder in the middle of a track, so clips that differ are
/// refused rather than written as several sample entries.
public enum BackgroundMusic {
    /// Writes the video tracks of `videoPath` with the clips of `clipPaths` as their music to a
    /// new MP4 at `outputPath`.
    ///
    /// Like ``AudioExtractor``, it writes to a temporary file beside `outputPath` and moves it
    /// into place atomically; on any error nothing is left behind. Throws a ``RemuxError``:
    /// ``RemuxError/Code/noVideoTrack`` when the video has none, and
    /// ``RemuxError/Code/incompatibleClips`` when the clips are coded differently.
    ///
    /// - Parameters:
    ///   - videoPath: the MP4 or MOV whose video tracks are copied.
    ///   - clipPaths: the music, played back to back in this order; at least one.
    ///   - outputPath: the MP4 to create.
    ///   - options: where the music starts, looping, seams, the video's own audio, overwriting.
    ///   - progress: called as the file is written, with the bytes written so far.
    ///   - isCancelled: polled while writing; when it returns true the mux stops, removes its
    ///     temporary file and throws ``RemuxError/Code/cancelled``.
    public static func mux(video videoPath: String, music clipPaths: [String], to outputPath: String,
                           options: MuxOptions = MuxOptions(), progress: ((RemuxProgress) -> Void)? = nil,
                           isCancelled: () -> Bool = { false }) throws(RemuxError) -> MuxResult {
        try bridged {
            guard !clipPaths.isEmpty else {
                throw RemuxError(.noAudioTrack, "no music clips were given")
            }
            let videoInput = try blaming(video: videoPath) { try InputFile(path: videoPath) }
            var inputs = [videoInput]
            for (i, path) in clipPaths.enumerated() {
                inputs.append(try blaming(clip: i, path) { try InputFile(path: path) })
            }
            if let existing = FileIdentity(path: outputPath), inputs.contains(where: { $0.identity == existing }) {
                throw RemuxError(.sameFile, "\(outputPath) is one of the inputs")
            }
            try Destination.check(outputPath, overwrite: options.overwrite)

            let plan = try MuxPlan(inputs: inputs, names: [videoPath] + clipPaths, options: options)
            let sink = try MovieFileSink(destination: outputPath, overwrite: options.overwrite, sources: inputs,
                                         bufferSize: options.bufferSize)
            var target = sink
            let size = try plan.write(into: &target, progress: progress, isCancelled: isCancelled)
            try sink.publish()
            return plan.result(outputPath: outputPath, bytesWritten: size)
        }
    }

    /// The `async` form of ``mux(video:music:to:options:progress:isCancelled:)-(String,_,_,_,_,_)``: it honours
    /// the calling task's cancellation, removing the temporary file, and reports progress to
    /// `progress` (called on the muxing thread). The blocking file I/O runs on a thread of
    /// its own, not on the cooperative pool.
    public static func mux(video videoPath: String, music clipPaths: [String], to outputPath: String,
                           options: MuxOptions = MuxOptions(),
                           progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(RemuxError) -> MuxResult {
        try await onOwnThread { isCancelled throws(RemuxError) in
            try mux(video: videoPath, music: clipPaths, to: outputPath, options: options, progress: progress,
                    isCancelled: isCancelled)
        }
    }

    /// Muxes from byte sources into any sink (memory, an app's own storage), as the file form
    /// does between files. Messages name the inputs "video" and "clip 1", "clip 2", …;
    /// ``MuxOptions/overwrite`` does not apply. The caller owns the sink: on error, what was
    /// written so far is incomplete.
    public static func mux<Source: ByteSource>(video: Source, music clips: [Source], to sink: inout some ByteSink,
                                               options: MuxOptions = MuxOptions(),
                                               progress: ((RemuxProgress) -> Void)? = nil,
                                               isCancelled: () -> Bool = { false }) throws(RemuxError) -> MuxResult {
        try bridged {
            guard !clips.isEmpty else {
                throw RemuxError(.noAudioTrack, "no music clips were given")
            }
            let names = ["video"] + clips.indices.map { "clip \($0 + 1)" }
            let inputs = [video] + clips
            let plan = try MuxPlan(inputs: inputs, names: names, options: options)
            var target = CopyingMovieSink(sink: sink, sources: inputs, bufferSize: options.bufferSize)
            defer {
                sink = target.sink
                target.deallocate()
            }
            let size = try plan.write(into: &target, progress: progress, isCancelled: isCancelled)
            try target.flush()
            return plan.result(outputPath: "", bytesWritten: size)
        }
    }

    /// How many packets the music track will hold, from the clips' own numbers alone, before
    /// any table is built: `--loop` repeats the clips to fill `ticks` (a length the video
    /// only claims), so the count is computed with checked arithmetic and compared with
    /// ``Limits/maximumMusicPackets`` by the caller. Saturates at `Int.max`.
    static func musicPackets(clips: [ClipTiming], filling ticks: UInt64, loop: Bool) -> Int {
        let passes = clips.map { ($0.presented, SeamPlanner.covering($0.durations, until: $0.priming + $0.presented).count) }
        var total = 0
        var left = ticks
        if loop {
            var cycleTicks: UInt64 = 0
            var cyclePackets = 0
            for pass in passes {
                let (sum, overflow) = cycleTicks.addingReportingOverflow(pass.0)
                cycleTicks = overflow ? .max : sum
                cyclePackets += pass.1  // At most the clips' samples, each < 2^30.
            }
            let cycles = left / max(cycleTicks, 1)  // Every clip presents something (checked by Clip).
            left -= cycles * cycleTicks  // cycles * cycleTicks <= left.
            guard let count = Int(exactly: cycles) else { return .max }
            let (product, overflow) = count.multipliedReportingOverflow(by: cyclePackets)
            if overflow { return .max }
            total = product
        }
        for (clip, pass) in zip(clips, passes) where left > 0 {
            let take = min(pass.0, left)
            let (sum, overflow) = total.addingReportingOverflow(
                SeamPlanner.covering(clip.durations, until: clip.priming + take).count + 1)
            if overflow { return .max }
            total = sum
            left -= take
        }
        return total
    }

    /// `seconds` in `timescale` ticks, or nil when that is not a sensible 64-bit count.
    static func ticks(_ seconds: Double, _ timescale: UInt32) -> UInt64? {
        MediaTime(seconds: seconds, timescale: timescale).flatMap { UInt64(exactly: $0.ticks) }
    }
}

/// Everything decided before the first byte is written: the writer with its tracks, and
/// what the result will say.
struct MuxPlan {
    var writer: MovieWriter
    var music: MusicLayout
    var names: [String]
    var videoTrackCount: Int
    var videoSeconds: Double
    var musicSeconds: Double
    var timescale: UInt32
    var dropped: [String]
    var warnings: [String] = []
    var droppedTracks: [RemuxResult.DroppedTrack] = []
    var exactSeams: Bool
    /// The clips placed, in all.
    var clipsPlaced: Int { music.plays.reduce(0, +) }

    /// `inputs[0]` is the video, the rest are the clips (at least one); `names` name them in
    /// messages.
    init<Source: ByteSource>(inputs: [Source], names: [String], options: MuxOptions) throws {
        self.names = names
        exactSeams = options.exactSeams
        let videoPath = names[0]
        // The video.
        let reader = try BackgroundMusic.blaming(video: videoPath) {
            try BackgroundMusic.explained(source: inputs[0]) { try MovieReader(reading: inputs[0]) }
        }
        let quickTimeLayout = reader.movie.usesQuickTimeLayout
        let allVideoTracks = reader.tracks.filter { $0.kind == .video }
        guard !allVideoTracks.isEmpty else {
            let described = reader.tracks.isEmpty ? "no tracks"
                : "tracks " + reader.tracks.map { "\($0.id) (\($0.track.handlerType))" }.joined(separator: ", ")
            throw RemuxError(.noVideoTrack, "\(videoPath) has no video track (it has \(described))")
        }

        // The clips.
        var clips: [Clip] = []
        for i in 1..<inputs.count {
            clips.append(try BackgroundMusic.blaming(clip: i - 1, names[i]) {
                try Clip(path: names[i], input: inputs[i])
            })
        }
        let first = clips[0]
        for clip in clips.dropFirst() where !clip.sharesCoding(with: first) {
            throw RemuxError(.incompatibleClips, "\(clip.path) is coded differently from \(first.path) "
                             + "(\(clip.describe) vs \(first.describe)): clips must share codec, sample rate, channels "
                             + "and decoder configuration to share one audio track")
        }
        let timescale = first.track.timescale  // > 0: checked by Clip.
        self.timescale = timescale

        var output = MovieWriter(movieTimescale: timescale)
        output.creationTime = reader.movie.header.creationTime
        output.modificationTime = reader.movie.header.modificationTime
        var notes: [String] = []
        if options.keepMetadata {
            func checked(_ box: [UInt8]?) -> [UInt8]? {
                guard let box else { return nil }
                let result = CopiedBoxSanitizer.sanitize(box, depth: 2, parentPath: "moov")
                notes += result.warnings.map { "\($0) (the video's metadata)" }
                return result.bytes
            }
            output.userData = checked(reader.movie.userData)
            output.metadata = checked(reader.movie.metadata)
        } else if reader.movie.userData != nil || reader.movie.metadata != nil {
            notes.append("the video's metadata (tags, cover art, metadata keys)")
        }
        output.userData = try options.tags.userData(output.userData)

        // A damaged track that would be copied (a video track; the original audio kept) is
        // left out with a warning and the rest muxed as if it were not there (issue 32); when
        // every video track is damaged, the first one's damage is the error, as before.
        var damaged = Set<UInt32>()
        // The indexes the check built, by track ID: each video track's is copied below, not
        // built again.
        var indexes: [UInt32: SampleIndex] = [:]
        for track in reader.tracks where track.kind == .video || (track.kind == .audio && options.keepOriginalAudio) {
            let inspection = reader.inspection(of: track)
            if let samples = inspection.samples, track.kind == .video { indexes[track.id] = samples }
            guard let damage = inspection.damage else { continue }
            damaged.insert(track.id)
            let dropped = RemuxResult.DroppedTrack(track, damage: damage)
            droppedTracks.append(dropped)
            warnings.append("\(videoPath): \(dropped.warning)")
        }
        let intactVideo = allVideoTracks.filter { !damaged.contains($0.id) }
        let videoTracks = intactVideo.isEmpty ? allVideoTracks : intactVideo

        // Video tracks: samples as they are, edits in the new movie timescale; the first
        // video track's presented length is the goal.
        var videoTicks: UInt64 = 0
        for (n, track) in videoTracks.enumerated() {
            let samples = try indexes[track.id] ?? BackgroundMusic.blaming(video: videoPath) {
                try BackgroundMusic.converted { try reader.samples(of: track) }
            }
            let presentation = reader.presentation(of: track, samples: samples)
            let copied = CopiedTrack.description(of: track.track, quickTimeLayout: quickTimeLayout, notes: &notes)
            let id = try BackgroundMusic.converted { try output.addTrack(copied) }
            var ticks = rescale(samples.totalDuration, from: track.timescale, to: timescale) ?? 0
            // The video's edits as the one presentation rule reads them, in the new movie
            // timescale; none when it presents the track whole.
            if let edits = presentation.edits(in: timescale), edits.totalDuration > 0,
               edits.totalDuration < UInt64.max {
                try BackgroundMusic.converted { try output.setEdits(edits, for: id) }
                ticks = edits.totalDuration
            }
            if n == 0 { videoTicks = ticks }
            for sample in samples {
                try BackgroundMusic.converted { try output.append(sample, from: 0, to: id) }
            }
        }
        videoTrackCount = videoTracks.count
        let videoSeconds = Double(videoTicks) / Double(timescale)
        self.videoSeconds = videoSeconds

        // The music track.
        guard let offsetTicks = BackgroundMusic.ticks(options.musicOffset, timescale), offsetTicks < videoTicks else {
            throw RemuxError(.invalidArgument, "the music would start at \(options.musicOffset) s, after the video ends "
                             + "(\(videoSeconds) s)")
        }
        let needed = videoTicks - offsetTicks  // offsetTicks < videoTicks, checked just above.
        let timings = clips.map(\.timing)
        let packets = BackgroundMusic.musicPackets(clips: timings, filling: needed, loop: options.loop)
        // What the clips really hold may always be written once; repeating them is capped.
        let limit = max(Limits.maximumMusicPackets, clips.reduce(0) { $0 + $1.samples.count })
        guard packets <= limit else {
            throw RemuxError(.invalidInput, "looping the music over \(videoPath) (\(videoSeconds) s) would take "
                             + "\(packets) packets, more than the \(limit) a mux may write; "
                             + "does the video really last that long?")
        }
        // One pass per clip play, each placing at least one packet: no more passes than packets
        // (packets <= limit, far below Int.max, so the sum cannot overflow).
        let rule = SeamRule(policy: .laying, codec: first.codec.kind, timescale: timescale,
                            frame: first.timing.durations.first ?? 1, sbr: first.codec.signalsSBR)
        let layout = SeamPlanner.plan(timings, filling: needed, offset: offsetTicks, loop: options.loop,
                                      exactSeams: options.exactSeams, maximumPasses: packets + clips.count + 1,
                                      rule: rule)
        music = layout
        notes += first.warnings.map { "\($0) (in \(names[1]))" }
        var description = TrackDescription(handler: HandlerBox(handlerType: .soun, name: "SoundHandler"),
                                           timescale: timescale, language: first.track.track.mediaHeader.language,
                                           sampleEntries: [first.outputEntry],
                                           mediaInformationHeader: SoundMediaHeaderBox().serialized)
        description.alternateGroup = 1
        let musicID = try BackgroundMusic.converted { try output.addTrack(description) }
        var placedPackets = 0
        for piece in layout.pieces {
            let clip = clips[piece.clip]
            for index in piece.packets {
                var sample = clip.samples[index]
                sample.duration = layout.durations[piece.clip][index]
                sample.descriptionIndex = 1
                sample.compositionOffset = 0
                sample.isSync = true
                try BackgroundMusic.converted { try output.append(sample, from: piece.clip + 1, to: musicID) }
            }
            placedPackets += piece.packets.count
        }
        try BackgroundMusic.converted { try output.setEdits(layout.edits, for: musicID) }
        if first.codec.kind == .aac, let count = UInt32(exactly: placedPackets) {
            try BackgroundMusic.converted {
                try output.setSampleGroups([.aacRoll], assignments: [
                    SampleToGroupBox(groupingType: .roll, entries: [.init(sampleCount: count, groupDescriptionIndex: 1)]),
                ], for: musicID)
            }
        }
        musicSeconds = Double(offsetTicks + music.musicTicks) / Double(timescale)

        // The video's own audio (the first intact track, when kept), and whatever else it holds.
        let others = reader.tracks.filter { $0.kind != .video && !damaged.contains($0.id) }
        for (n, track) in others.enumerated() {
            let describe = "track \(track.id) (\(track.kind == .audio ? "audio" : "\(track.track.handlerType)")"
                + (track.format.map { ", \($0)" } ?? "") + ")"
            if track.kind == .audio && n == others.firstIndex(where: { $0.kind == .audio }) && options.keepOriginalAudio {
                // The one check extraction makes; the output is an ISO file, so a QuickTime
                // sound description is written as an ISO entry.
                let entries: [[UInt8]]
                do {
                    entries = try CopiedTrack.checkedSoundEntries(of: track.track, quickTimeLayout: quickTimeLayout,
                                                                  quickTimeOutput: false)
                } catch let error as RemuxError {
                    notes.append("the video's own audio, \(describe): \(error.message)")
                    continue
                }
                let samples = try BackgroundMusic.blaming(video: videoPath) {
                    try BackgroundMusic.converted { try reader.samples(of: track) }
                }
                let presentation = reader.presentation(of: track, samples: samples)
                var original = CopiedTrack.description(of: track.track, quickTimeLayout: quickTimeLayout,
                                                       soundEntries: entries, notes: &notes)
                original.isEnabled = false
                original.alternateGroup = 1
                let id = try BackgroundMusic.converted { try output.addTrack(original) }
                if let edits = presentation.edits(in: timescale), !edits.isEmpty {
                    try BackgroundMusic.converted { try output.setEdits(edits, for: id) }
                }
                for sample in samples {
                    try BackgroundMusic.converted { try output.append(sample, from: 0, to: id) }
                }
            } else if track.kind == .audio {
                notes.append("the video's own audio, \(describe)"
                               + (options.keepOriginalAudio ? " (only the first audio track is kept)" : ""))
            } else {
                notes.append("the video's \(describe)")
            }
        }
        if let chapters = options.tags.chapters {
            let written = try ExtractedMovie.addChapters(chapters, to: &output)
            warnings += ChapterTrack.neroLimitWarning(count: written.chapters.count).map { [$0] } ?? []
        }
        self.writer = output
        dropped = notes
    }

    /// Writes the file into `sink`; returns its size.
    func write(into sink: inout some MovieSink, progress: ((RemuxProgress) -> Void)?,
               isCancelled: () -> Bool) throws(RemuxError) -> UInt64 {
        try writer.writeProgressive(into: &sink, progress: progress, isCancelled: isCancelled)
    }

    func result(outputPath: String, bytesWritten: UInt64) -> MuxResult {
        let largest = music.seamErrors.map { $0.magnitude }.max() ?? 0
        return MuxResult(outputPath: outputPath, videoTrackCount: videoTrackCount,
                         clips: zip(names.dropFirst(), music.plays).map { MuxResult.ClipUse(path: $0, plays: $1) },
                         videoDuration: videoSeconds, musicDuration: musicSeconds, exactSeams: exactSeams,
                         largestSeamError: Double(largest) / Double(timescale), dropped: dropped,
                         bytesWritten: bytesWritten, warnings: warnings, droppedTracks: droppedTracks)
    }
}

extension BackgroundMusic {
    /// Runs `body`, saying in its error that the video is at fault, unless it names it already.
    static func blaming<T>(video path: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as RemuxError {
            throw error.message.hasPrefix(path) ? error : error.prefixed("the video (\(path))")
        }
    }

    /// Runs `body`, saying in its error which music clip (counted from 1) is at fault.
    static func blaming<T>(clip index: Int, _ path: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as RemuxError {
            throw error.prefixed("music clip \(index + 1) (\(path))")
        }
    }

    /// `body`'s result, its ``ISOBMFFError`` turned into a ``RemuxError``.
    static func converted<T>(_ body: () throws -> T) throws -> T {
        try bridged(body)
    }

    /// `parsed`, or its error with what the file looks like when it is not an MP4 at all.
    static func explained<T>(source: some ByteSource, _ parsed: () throws -> T) throws -> T {
        do { return try converted(parsed) } catch let error as RemuxError {
            throw FileSignature.explain(error, source: source)
        }
    }
}
