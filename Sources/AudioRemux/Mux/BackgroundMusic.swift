import ISOBMFF

/// Options for ``BackgroundMusic/mux(video:music:to:options:isCancelled:)-(String,_,_,_,_)``.
public struct MuxOptions: Sendable {
    /// Where the music starts, in seconds from the start of the video.
    public var musicOffset: Double
    /// Keep the video's own audio as a second, disabled audio track (an alternative to
    /// the music, in the same alternate group).
    public var keepOriginalAudio: Bool
    /// Repeat the clips until the video ends.
    public var loop: Bool
    /// Replace an existing destination (atomically). Off by default: an existing file is
    /// never touched.
    public var overwrite: Bool
    /// The size of the copy buffer; memory use does not grow with the files.
    public var bufferSize: Int

    /// Options with safe defaults: music from the start, the video's audio dropped, no loop,
    /// an existing destination left alone, a 1 MiB buffer (raised to at least 64 KiB).
    public init(musicOffset: Double = 0, keepOriginalAudio: Bool = false, loop: Bool = false, overwrite: Bool = false,
                bufferSize: Int = 1 << 20) {
        self.musicOffset = musicOffset
        self.keepOriginalAudio = keepOriginalAudio
        self.loop = loop
        self.overwrite = overwrite
        self.bufferSize = max(bufferSize, 64 << 10)
    }
}

/// What ``BackgroundMusic`` produced.
public struct MuxResult: Sendable, Equatable {
    /// Where the output was published.
    public var outputPath: String
    /// How many video tracks were copied.
    public var videoTrackCount: Int
    /// How many clips were placed (a clip used twice by `loop` counts twice).
    public var clipsPlaced: Int
    /// Seconds.
    public var videoDuration: Double
    /// The music track's presented duration in seconds, counted from the start of the video
    /// (``MuxOptions/musicOffset`` included).
    public var musicDuration: Double
    /// The size of the output file.
    public var bytesWritten: UInt64
}

/// Puts music under a video by stream copy: the video track(s) unchanged, and one audio
/// track made of the clips back to back, cut where the video ends.
///
/// Timing is exact without decoding: the output's movie timescale is the audio's sample
/// rate, and an edit list entry per clip skips that clip's priming (so the clips join
/// gaplessly) and cuts the last clip at the video's end to the sample — the last packet is
/// kept, the edit trims it. Clips must share one coding (codec, sample rate, channels and
/// decoder configuration): players do not reconfigure a decoder in the middle of a track,
/// so clips that differ are refused rather than written as several sample entries.
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
    ///   - options: where the music starts, looping, the video's own audio, overwriting.
    ///   - isCancelled: polled while copying; when it returns true the mux stops, removes its
    ///     temporary file and throws ``RemuxError/Code/cancelled``.
    public static func mux(video videoPath: String, music clipPaths: [String], to outputPath: String,
                           options: MuxOptions = MuxOptions(), isCancelled: () -> Bool = { false }) throws -> MuxResult {
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
        var output = try OutputFile(destination: outputPath, overwrite: options.overwrite)
        do {
            try plan.layout.write(tracks: plan.tracks, inputs: inputs, to: &output, bufferSize: options.bufferSize,
                                  isCancelled: isCancelled)
            try output.publish(overwrite: options.overwrite)
        } catch {
            output.discard()
            throw error
        }
        return plan.result(outputPath: outputPath, bytesWritten: output.position)
    }

    /// Muxes from byte sources into any sink (memory, an app's own storage), as the file form
    /// does between files. Messages name the inputs "video" and "clip 1", "clip 2", …;
    /// ``MuxOptions/overwrite`` does not apply. The caller owns the sink: on error, what was
    /// written so far is incomplete.
    public static func mux<Source: ByteSource>(video: Source, music clips: [Source], to sink: inout some ByteSink,
                                               options: MuxOptions = MuxOptions(),
                                               isCancelled: () -> Bool = { false }) throws -> MuxResult {
        guard !clips.isEmpty else {
            throw RemuxError(.noAudioTrack, "no music clips were given")
        }
        let names = ["video"] + clips.indices.map { "clip \($0 + 1)" }
        let plan = try MuxPlan(inputs: [video] + clips, names: names, options: options)
        try plan.layout.write(tracks: plan.tracks, inputs: [video] + clips, to: &sink, bufferSize: options.bufferSize,
                              isCancelled: isCancelled)
        return plan.result(outputPath: "", bytesWritten: plan.layout.outputSize)
    }

    /// How many packets the music track will hold, from the clips' own numbers alone, before
    /// any table is built: `--loop` repeats the clips to fill `ticks` (a length the video
    /// only claims), so the count is computed with checked arithmetic and compared with
    /// ``Limits/maximumMusicPackets`` by the caller. Saturates at `Int.max`. Throws when a clip
    /// presents nothing (looping it would never fill the video).
    static func musicPackets(clips: [Clip], filling ticks: UInt64, loop: Bool) throws -> Int {
        var passes: [(ticks: UInt64, packets: Int)] = []
        for clip in clips {
            guard clip.presentedTicks > 0 else {
                throw RemuxError(.invalidInput, "\(clip.path) holds no audio to play")
            }
            passes.append((clip.presentedTicks, clip.samplesCovering(until: clip.priming + clip.presentedTicks).count))
        }
        // Whole cycles through the clips, then the clips of the last, partial, cycle.
        var total = 0
        var left = ticks
        if loop {
            var cycleTicks: UInt64 = 0
            var cyclePackets = 0
            for pass in passes {
                let (sum, overflow) = cycleTicks.addingReportingOverflow(pass.ticks)
                cycleTicks = overflow ? .max : sum
                cyclePackets += pass.packets  // At most the clips' samples, each < 2^30.
            }
            let cycles = left / cycleTicks  // cycleTicks > 0: every clip presents something.
            left -= cycles * cycleTicks  // cycles * cycleTicks <= left.
            guard let count = Int(exactly: cycles) else { return .max }
            let (product, overflow) = count.multipliedReportingOverflow(by: cyclePackets)
            if overflow { return .max }
            total = product
        }
        for (clip, pass) in zip(clips, passes) where left > 0 {
            let take = min(pass.ticks, left)
            let (sum, overflow) = total.addingReportingOverflow(clip.samplesCovering(until: clip.priming + take).count)
            if overflow { return .max }
            total = sum
            left -= take
        }
        return total
    }

    /// `seconds` in `timescale` ticks, or nil when that is not a sensible 64-bit count.
    static func ticks(_ seconds: Double, _ timescale: UInt32) -> UInt64? {
        let value = (seconds * Double(timescale)).rounded()
        guard value.isFinite, value >= 0, value < 1.8e19 else { return nil }
        return UInt64(value)
    }
}

/// Everything decided before the first byte is written: the tracks and the file's layout.
struct MuxPlan {
    var tracks: [TrackPlan]
    var layout: MuxLayout
    var videoTrackCount: Int
    var clipsPlaced: Int
    var videoSeconds: Double
    var musicSeconds: Double

    /// `inputs[0]` is the video, the rest are the clips (at least one); `names` name them in
    /// messages.
    init<Source: ByteSource>(inputs: [Source], names: [String], options: MuxOptions) throws {
        let videoInput = inputs[0]
        let videoPath = names[0]
        // The video.
        let videoMovie = try BackgroundMusic.blaming(video: videoPath) {
            try BackgroundMusic.explained(parse { try Movie(reading: videoInput) }, source: videoInput)
        }
        let videoTracks = videoMovie.tracks.filter { $0.handlerType == .vide }
        guard !videoTracks.isEmpty else {
            throw RemuxError(.noVideoTrack, "\(videoPath) has no video track (it has \(Extraction.describe(videoMovie.tracks)))")
        }
        var plans: [TrackPlan] = []
        for track in videoTracks {
            let (table, _) = try Extraction.sampleTable(of: track, in: videoMovie, source: videoInput, salvage: false,
                                                        name: videoPath)
            plans.append(TrackPlan(copying: track, table: table, source: 0))
        }

        // The clips.
        var clips: [Clip] = []
        for i in 1..<inputs.count {
            clips.append(try BackgroundMusic.blaming(clip: i - 1, names[i]) {
                try Clip(path: names[i], input: inputs[i], source: i)
            })
        }
        let first = clips[0]
        for clip in clips.dropFirst() where !clip.sharesCoding(with: first) {
            throw RemuxError(.incompatibleClips, "\(clip.path) is coded differently from \(first.path) "
                             + "(\(clip.describe) vs \(first.describe)): clips must share codec, sample rate, channels "
                             + "and decoder configuration to share one audio track")
        }
        let timescale = first.track.mediaHeader.timescale
        guard timescale > 0 else { throw RemuxError(.invalidInput, "\(first.path): the media timescale is 0") }

        // Video edit lists and durations move to the new movie timescale (the audio's, so that
        // the music's edits are exact); the first video track's presented length is the goal.
        for i in plans.indices {
            plans[i].header.trackID = UInt32(i + 1)
            plans[i].retime(from: videoMovie.header.timescale, to: timescale)
        }
        let videoTicks = plans[0].header.duration
        let videoSeconds = Double(videoTicks) / Double(timescale)

        // The music track: clip after clip, each clip's priming skipped by its own edit.
        guard let offsetTicks = BackgroundMusic.ticks(options.musicOffset, timescale), offsetTicks < videoTicks else {
            throw RemuxError(.invalidArgument, "the music would start at \(options.musicOffset) s, after the video ends "
                             + "(\(videoSeconds) s)")
        }
        let needed = videoTicks - offsetTicks  // offsetTicks < videoTicks, checked just above.
        let packets = try BackgroundMusic.musicPackets(clips: clips, filling: needed, loop: options.loop)
        // What the clips really hold may always be written once; repeating them is capped.
        let limit = max(Limits.maximumMusicPackets, clips.reduce(0) { $0 + $1.table.sampleCount })
        guard packets <= limit else {
            throw RemuxError(.invalidInput, "looping the music over \(videoPath) (\(videoSeconds) s) would take "
                             + "\(packets) packets, more than the \(limit) a mux may write; "
                             + "does the video really last that long?")
        }
        var mediaHeader = first.track.mediaHeader
        let musicTrackID = UInt32(plans.count + 1)
        var music = TrackPlan(audioHeader: TrackHeaderBox(trackID: musicTrackID, duration: 0, alternateGroup: 1),
                              mediaHeader: mediaHeader, entry: first.outputEntry)
        var edits: [EditListBox.Entry] = offsetTicks > 0 ? [.init(segmentDuration: offsetTicks, mediaTime: -1)] : []
        var timing: [TimeToSampleBox.Entry] = []
        var left = needed
        var base: UInt64 = 0
        var placed = 0
        // At most `packets` packets (counted above, within the limit), and each pass places at
        // least one packet: musicPackets refuses a clip that presents nothing.
        while left > 0 && (options.loop || placed < clips.count) {
            let clip = clips[placed % clips.count]
            let take = min(clip.presentedTicks, left)
            let (count, ticks) = clip.samplesCovering(until: clip.priming + take)
            music.append(clip.table, count: count, source: clip.source, descriptionIndex: 1)
            for duration in clip.durations.prefix(count) {
                if let last = timing.last, last.sampleDelta == duration {
                    timing[timing.count - 1].sampleCount += 1
                } else {
                    timing.append(.init(sampleCount: 1, sampleDelta: duration))
                }
            }
            // base sums the durations of at most maximumMusicPackets packets, each at most
            // Limits.maximumAudioPacketSeconds long (checked by Clip): far below 2^63 ticks.
            guard let start = Int64(exactly: base + clip.priming) else {
                throw RemuxError(.invalidInput, "\(clip.path): the music's timeline overflows")
            }
            edits.append(.init(segmentDuration: take, mediaTime: start))
            base += ticks
            left -= take
            placed += 1
        }
        let musicTicks = edits.reduce(UInt64(0)) { $0 + $1.segmentDuration }
        mediaHeader.duration = base
        music.mediaHeader = mediaHeader
        music.timeToSample = TimeToSampleBox(entries: timing)
        music.editList = EditListBox(entries: edits)
        music.header.duration = musicTicks
        if first.codec.kind == .aac {
            music.groups = [.aacRoll]
            music.sampleToGroups = [SampleToGroupBox(groupingType: .roll, entries: [
                .init(sampleCount: UInt32(music.sampleCount), groupDescriptionIndex: 1),
            ])]
        }

        plans.append(music)
        if options.keepOriginalAudio, let original = videoMovie.tracks.first(where: \.isAudio) {
            let (table, _) = try Extraction.sampleTable(of: original, in: videoMovie, source: videoInput, salvage: false,
                                                        name: videoPath)
            var plan = TrackPlan(copying: original, table: table, source: 0)
            plan.header.trackID = UInt32(plans.count + 1)
            plan.header.flags &= ~TrackHeaderBox.enabledFlag
            plan.header.alternateGroup = 1
            plan.retime(from: videoMovie.header.timescale, to: timescale)
            plans.append(plan)
        }

        let movieDuration = plans.map(\.header.duration).max() ?? 0
        var movieHeader = videoMovie.header
        movieHeader.timescale = timescale
        movieHeader.duration = movieDuration
        movieHeader.nextTrackID = UInt32(plans.count + 1)
        layout = try MuxLayout(tracks: plans, movieHeader: movieHeader,
                                   fileType: FileTypeBox(majorBrand: .isom, minorVersion: 0x200,
                                                         compatibleBrands: [.isom, "iso2", .mp42]))
        tracks = plans
        videoTrackCount = videoTracks.count
        clipsPlaced = placed
        self.videoSeconds = videoSeconds
        musicSeconds = Double(musicTicks) / Double(timescale)
    }

    func result(outputPath: String, bytesWritten: UInt64) -> MuxResult {
        MuxResult(outputPath: outputPath, videoTrackCount: videoTrackCount, clipsPlaced: clipsPlaced,
                  videoDuration: videoSeconds, musicDuration: musicSeconds, bytesWritten: bytesWritten)
    }
}

/// One music clip: its audio track, checked, with the numbers the timeline needs.
struct Clip {
    let path: String
    let source: Int
    let movie: Movie
    let track: Track
    let table: SampleTable
    let codec: AudioCodec
    let outputEntry: [UInt8]
    /// Samples of priming at the start (the first edit's media time).
    let priming: UInt64
    /// The ticks the clip presents after its priming (its edit list's duration, or the rest).
    let presentedTicks: UInt64
    let durations: [UInt32]

    init(path: String, input: some ByteSource, source: Int) throws {
        self.path = path
        self.source = source
        movie = try BackgroundMusic.explained(parse { try Movie(reading: input) }, source: input)
        track = try Extraction.select(.firstAudio, in: movie, name: path)
        try Extraction.checkSamplesAreInFile(track)
        (table, _) = try Extraction.sampleTable(of: track, in: movie, source: input, salvage: false, name: path)
        let index = Int(table.boxes.sampleToChunk.entries.first?.sampleDescriptionIndex ?? 1) - 1
        guard index < track.sampleDescriptions.entries.count else {
            throw RemuxError(.invalidInput, "\(path): the audio track has no sample description")
        }
        let entry = track.sampleDescriptions.entries[index]
        codec = try AudioCodec(entry: entry, quickTimeLayout: movie.usesQuickTimeLayout)
        if table.boxes.sampleToChunk.entries.contains(where: { $0.sampleDescriptionIndex != UInt32(index + 1) }) {
            throw RemuxError(.incompatibleClips, "\(path) changes its coding midway (several sample descriptions)")
        }
        outputEntry = codec.outputEntry(original: entry)
        let timescale = track.mediaHeader.timescale
        guard timescale > 0 else { throw RemuxError(.invalidInput, "\(path): the audio track's timescale is 0") }
        // A packet claiming hours (a first stts delta of 0xFFFFFC00 was seen) would make one
        // packet cover the whole edit: the output held that packet alone and did not decode.
        // Its real length is unknown without decoding, so the clip is refused.
        let longest = UInt64(timescale) * Limits.maximumAudioPacketSeconds  // < 2^36.
        var durations: [UInt32] = []
        durations.reserveCapacity(table.sampleCount)
        for run in table.boxes.timeToSample.entries where run.sampleCount > 0 {
            if UInt64(run.sampleDelta) > longest {
                throw RemuxError(.invalidInput, "\(path): packet \(durations.count + 1) lasts \(run.sampleDelta) ticks "
                                 + "(\(run.sampleDelta / timescale) s at \(timescale) Hz) by its timing table (stts); "
                                 + "an audio packet lasts at most a few seconds, so the clip's timing cannot be placed")
            }
            durations.append(contentsOf: repeatElement(run.sampleDelta, count: Int(run.sampleCount)))
        }
        self.durations = durations
        let total = table.totalDuration
        let edit = track.editList?.entries.first { !$0.isEmpty }
        let priming = min(UInt64(clamping: edit?.mediaTime ?? 0), total)
        self.priming = priming
        var presented = total - priming
        if let edits = track.editList?.entries, !edits.isEmpty, movie.header.timescale > 0 {
            let segments = edits.filter { !$0.isEmpty }.map(\.segmentDuration).saturatingSum
            if segments > 0, let ticks = rescale(segments, from: movie.header.timescale,
                                                 to: track.mediaHeader.timescale) {
                presented = min(presented, ticks)
            }
        }
        presentedTicks = presented
    }

    /// The number of samples needed to present media up to `time`, and their total duration.
    func samplesCovering(until time: UInt64) -> (count: Int, ticks: UInt64) {
        var ticks: UInt64 = 0
        var count = 0
        while count < durations.count && ticks < time {
            ticks += UInt64(durations[count])
            count += 1
        }
        return (count, ticks)
    }

    func sharesCoding(with other: Clip) -> Bool {
        codec.kind == other.codec.kind && codec.sampleRate == other.codec.sampleRate
            && codec.channelCount == other.codec.channelCount
            && track.mediaHeader.timescale == other.track.mediaHeader.timescale
            && decoderConfiguration == other.decoderConfiguration
    }

    /// The bytes that configure the decoder: the AudioSpecificConfig for AAC, else the
    /// configuration box's payload (bitrate fields in `esds` may differ freely).
    var decoderConfiguration: [UInt8] {
        if let descriptor = codec.descriptor {
            return [descriptor.objectTypeIndication] + (descriptor.decoderSpecificInfo ?? [])
        }
        return Array(codec.configurationBox.dropFirst(8))
    }

    var describe: String {
        "\(codec.codecString), \(codec.sampleRate) Hz, \(codec.channelCount) ch"
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

    /// `parsed`, or its error with what the file looks like when it is not an MP4 at all.
    static func explained(_ parsed: @autoclosure () throws -> Movie, source: some ByteSource) throws -> Movie {
        do { return try parsed() } catch let error as RemuxError {
            throw FileSignature.explain(error, source: source)
        }
    }
}
