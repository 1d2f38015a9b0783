import ISOBMFF

/// Joins files losslessly, by stream copy: audiobooks from their parts, clips from one
/// camera, songs into one file.
///
/// **Audio joins** (each input one audio track): every input's packets once, in order, never
/// altered; one edit list entry for the whole track (skipping the first input's priming,
/// ending where the last one's sound does) and `iTunSMPB` to match. Whole packets of
/// independently encoded inputs cannot meet exactly: at each seam the seam rule leaves out
/// at most two packets (the previous input's last, mostly padding, ones and the next one's
/// priming) choosing, in this order, a dip of at most 12 ms, then a start error of at most
/// one frame + 2 ms from where the input belongs (never carried from seam to seam), then the
/// shortest dip. ALAC and FLAC are joined to the sample.
///
/// **Video joins** (each input one video track and at most one audio track, of the same
/// kinds): the video from each input's first sync sample, back to back, one edit; each
/// input's audio placed at its own pictures (the seam chosen for sync first: within half an
/// audio frame, never accumulating).
///
/// Inputs coded differently (codec, sample rate, channels, decoder configuration, the set
/// of track kinds) are refused before anything is written
/// (``RemuxError/Code/incompatibleClips``). The output is written beside the destination and
/// moved into place atomically; on any error nothing is left behind. An output named
/// `.m4b` gets Apple's audiobook brand `M4B `.
public enum Concatenation {
    /// Joins `paths`, in order, into a new file at `outputPath`.
    ///
    /// - Parameters:
    ///   - paths: the inputs, in the order they are joined (at least one).
    ///   - outputPath: the file to create; it must not be one of the inputs.
    ///   - options: chapters, overwriting, the copy buffer.
    ///   - progress: called as the file is written, with the bytes written so far.
    ///   - isCancelled: polled while writing; when it returns true the join stops, removes
    ///     its temporary file and throws ``RemuxError/Code/cancelled``.
    public static func join(_ paths: [String], to outputPath: String, options: ConcatOptions = ConcatOptions(),
                            progress: ((RemuxProgress) -> Void)? = nil,
                            isCancelled: () -> Bool = { false }) throws(RemuxError) -> ConcatResult {
        try bridged {
            guard paths.count >= 1 else {
                throw RemuxError(.invalidArgument, "concat needs at least one input")
            }
            var inputs: [InputFile] = []
            inputs.reserveCapacity(paths.count)
            for path in paths { inputs.append(try InputFile(path: path)) }
            if let existing = FileIdentity(path: outputPath), inputs.contains(where: { $0.identity == existing }) {
                throw RemuxError(.sameFile, "\(outputPath) is one of the inputs")
            }
            try Destination.check(outputPath, overwrite: options.overwrite)
            let audiobook = outputPath.lowercased().hasSuffix(".m4b")
            var plan = try ConcatPlan(inputs: inputs, names: paths, options: options, audiobook: audiobook)
            let sink = try MovieFileSink(destination: outputPath, overwrite: options.overwrite, sources: inputs,
                                         bufferSize: options.bufferSize)
            var target = sink
            let size = try plan.write(into: &target, progress: progress, isCancelled: isCancelled)
            try sink.publish()
            plan.result.outputPath = outputPath
            plan.result.bytesWritten = size
            return plan.result
        }
    }

    /// The `async` form of ``join(_:to:options:progress:isCancelled:)``: it honours the
    /// calling task's cancellation, removing the temporary file. The blocking file I/O runs
    /// on a thread of its own, not on the cooperative pool.
    public static func join(_ paths: [String], to outputPath: String, options: ConcatOptions = ConcatOptions(),
                            progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(RemuxError) -> ConcatResult {
        try await onOwnThread { isCancelled throws(RemuxError) in
            try join(paths, to: outputPath, options: options, progress: progress, isCancelled: isCancelled)
        }
    }

    /// Joins byte sources into any sink, as the file form does between files. Messages name
    /// the inputs by `names`; the caller owns the sink.
    public static func join<Source: ByteSource>(_ sources: [Source], names: [String], to sink: inout some ByteSink,
                                                options: ConcatOptions = ConcatOptions(),
                                                progress: ((RemuxProgress) -> Void)? = nil,
                                                isCancelled: () -> Bool = { false }) throws(RemuxError) -> ConcatResult {
        try bridged {
            guard !sources.isEmpty, sources.count == names.count else {
                throw RemuxError(.invalidArgument, "concat needs at least one input, each with a name")
            }
            let plan = try ConcatPlan(inputs: sources, names: names, options: options, audiobook: false)
            var target = CopyingMovieSink(sink: sink, sources: sources, bufferSize: options.bufferSize)
            defer {
                sink = target.sink
                target.deallocate()
            }
            let size = try plan.write(into: &target, progress: progress, isCancelled: isCancelled)
            try target.flush()
            var result = plan.result
            result.bytesWritten = size
            return result
        }
    }
}

/// Everything decided before the first byte of a join is written.
struct ConcatPlan {
    var writer: MovieWriter
    var result: ConcatResult

    /// Runs `body`, naming the input `name` in its error unless it does already: a join's
    /// inputs are files with a video or audio only, not "the video" a mux has.
    static func blaming<T>(input name: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as RemuxError { throw error.naming(name) }
    }

    init<Source: ByteSource>(inputs: [Source], names: [String], options: ConcatOptions, audiobook: Bool) throws {
        var warnings: [String] = []
        // Each input: its reader, its first video track and its audio (as a music clip is read).
        var readers: [MovieReader<Source>] = []
        var droppedTracks: [[String]] = []  // Per input: its damaged tracks, left out.
        var videos: [MediaTrack?] = []
        var clips: [Clip?] = []
        for (input, name) in zip(inputs, names) {
            let reader = try Self.blaming(input: name) {
                try BackgroundMusic.explained(source: input) { try MovieReader(reading: input) }
            }
            // A damaged track (no readable stsd, tables that contradict one another) is left
            // out with a warning and the input joined as if it were not there (issue 32); if
            // that leaves the inputs differing, the join is refused below, naming it.
            var damaged = Set<UInt32>()
            var dropped: [String] = []
            for track in reader.tracks where track.kind == .audio || track.kind == .video {
                guard let damage = reader.damage(of: track) else { continue }
                damaged.insert(track.id)
                dropped.append(RemuxResult.DroppedTrack(track, damage: damage).warning)
            }
            warnings += dropped.map { "\(name): \($0)" }
            droppedTracks.append(dropped)
            let video = reader.tracks.first { $0.kind == .video && !damaged.contains($0.id) }
            // The first audio track is the one joined (as a music clip is read): damaged, none.
            let hasAudio = reader.tracks.first { $0.kind == .audio }.map { !damaged.contains($0.id) } ?? false
            guard video != nil || hasAudio else {
                throw RemuxError(damaged.isEmpty ? .noAudioTrack : .invalidInput,
                                 "\(name) has neither an audio nor a video track"
                                 + (damaged.isEmpty ? "" : " that is not damaged (see the warnings)"))
            }
            let clip = hasAudio ? try Self.blaming(input: name) { try Clip(path: name, input: input) } : nil
            let others = reader.tracks.filter { track in
                track.id != video?.id && track.id != clip?.track.id && !track.track.isTextTrack
                    && !damaged.contains(track.id)
            }
            if !others.isEmpty && readers.isEmpty {
                warnings.append("left out of the join: " + others.map { "track \($0.id) (\($0.track.handlerType))" }
                    .joined(separator: ", ") + " of \(name) and the like of the other inputs")
            }
            readers.append(reader)
            videos.append(video)
            clips.append(clip)
        }
        // The same kinds and codings throughout, or nothing is written.
        let hasVideo = videos[0] != nil
        let hasAudio = clips[0] != nil
        for i in inputs.indices.dropFirst() {
            if (videos[i] != nil) != hasVideo || (clips[i] != nil) != hasAudio {
                func kinds(_ j: Int) -> String {
                    [videos[j] != nil ? "video" : nil, clips[j] != nil ? "audio" : nil].compactMap { $0 }
                        .joined(separator: " and ")
                }
                let damage = [0, i].flatMap { j in droppedTracks[j].map { "\(names[j]): \($0)" } }
                throw RemuxError(.incompatibleClips, "\(names[i]) has \(kinds(i)) where \(names[0]) has \(kinds(0)): "
                                 + "the inputs of a join must have the same kinds of track"
                                 + (damage.isEmpty ? "" : " (" + damage.joined(separator: "; ") + ")"))
            }
            if let clip = clips[i], let first = clips[0], !clip.sharesCoding(with: first) {
                throw RemuxError(.incompatibleClips, "\(names[i]) is coded differently from \(names[0]) "
                                 + "(\(clip.describe) vs \(first.describe)): the inputs of a join must share codec, "
                                 + "sample rate, channels and decoder configuration")
            }
            if let video = videos[i], let first = videos[0], let difference = Self.videoDifference(video, first) {
                throw RemuxError(.incompatibleClips, "\(names[i])'s video differs from \(names[0])'s (\(difference)): "
                                 + "the inputs of a join must come from one encoder with one configuration")
            }
        }

        // The movie counts in the audio's sample rate, so the audio edit is exact.
        let timescale = clips[0]?.track.timescale ?? videos[0]?.timescale ?? 1000
        var output = MovieWriter(movieTimescale: timescale)
        output.creationTime = readers[0].movie.header.creationTime
        output.modificationTime = readers[0].movie.header.modificationTime

        // Video: each input from its first sync sample, back to back.
        var videoStarts: [UInt64] = []  // Each input's video start, in the movie timescale.
        var videoTicks: UInt64 = 0  // In the video's media timescale.
        var videoID: UInt32?
        if let firstVideo = videos[0] {
            let quickTime = readers[0].movie.usesQuickTimeLayout
            var notes: [String] = []
            var description = CopiedTrack.description(of: firstVideo.track, quickTimeLayout: quickTime, notes: &notes)
            description.sampleEntries = Array(description.sampleEntries.prefix(1))
            let id = try BackgroundMusic.converted { try output.addTrack(description) }
            videoID = id
            var firstMediaTime: Int64 = 0
            for (i, reader) in readers.enumerated() {
                guard let track = videos[i] else { continue }
                let samples = try BackgroundMusic.blaming(video: names[i]) {
                    try BackgroundMusic.converted { try reader.samples(of: track) }
                }
                guard let sync = samples.firstIndex(where: \.isSync) else {
                    throw RemuxError(.invalidInput, "\(names[i]): the video has no sync sample to start from")
                }
                if sync > samples.startIndex {
                    warnings.append("\(names[i]): \(sync - samples.startIndex) video frame(s) before its first sync "
                                    + "sample were left out (they cannot be decoded after the input before it)")
                }
                if i == 0 {
                    let presentation = reader.presentation(of: track, samples: samples)
                    firstMediaTime = presentation.edits.first { !$0.isEmpty }?.mediaTime ?? 0
                }
                videoStarts.append(rescale(videoTicks, from: track.timescale, to: timescale) ?? 0)
                for sample in samples[sync...] {
                    var copied = sample
                    copied.descriptionIndex = 1
                    try BackgroundMusic.converted { try output.append(copied, from: i, to: id) }
                    videoTicks += UInt64(sample.duration)
                }
            }
            let presented = rescale(videoTicks, from: firstVideo.timescale, to: timescale) ?? 0
            try BackgroundMusic.converted {
                try output.setEdits([.init(segmentDuration: presented, mediaTime: max(firstMediaTime, 0))], for: id)
            }
            warnings += notes
            videoStarts.append(presented)
        }

        // Audio: the parts through the seam rule.
        var parts: [ConcatResult.Part] = []
        var audioPackets = 0
        var presentedTicks: UInt64 = 0
        if let first = clips[0] {
            let audio = clips.map { $0! }  // Every input has audio: checked above.
            let timings = audio.map(\.timing)
            let frame = first.timing.durations.first ?? 1
            var rule = SeamRule(policy: .joining, codec: first.codec.kind, timescale: timescale, frame: frame,
                                sbr: first.codec.signalsSBR)
            var places: [Int64]?
            if hasVideo {
                rule.syncFirst = true
                rule.errorBound = UInt64(frame) / 2
                places = videoStarts.dropLast().map { Int64(clamping: $0) }
            }
            let layout = SeamPlanner.plan(timings, filling: UInt64(Int64.max), offset: 0, loop: false,
                                          exactSeams: false, maximumPasses: audio.count + 1, rule: rule, places: places)
            var description = TrackDescription(handler: HandlerBox(handlerType: .soun, name: "SoundHandler"),
                                               timescale: timescale, language: first.track.track.mediaHeader.language,
                                               sampleEntries: [Self.joinedEntry(first.outputEntry, codec: first.codec.kind)],
                                               mediaInformationHeader: SoundMediaHeaderBox().serialized)
            description.alternateGroup = 1
            let id = try BackgroundMusic.converted { try output.addTrack(description) }
            var used = [Int](repeating: 0, count: audio.count)
            for piece in layout.pieces {
                let clip = audio[piece.clip]
                for index in piece.packets {
                    var sample = clip.samples[index]
                    sample.duration = layout.durations[piece.clip][index]
                    sample.descriptionIndex = 1
                    sample.compositionOffset = 0
                    sample.isSync = true
                    try BackgroundMusic.converted { try output.append(sample, from: piece.clip, to: id) }
                }
                used[piece.clip] += piece.packets.count
                audioPackets += piece.packets.count
            }
            try BackgroundMusic.converted { try output.setEdits(layout.edits, for: id) }
            if first.codec.kind == .aac, let count = UInt32(exactly: audioPackets) {
                try BackgroundMusic.converted {
                    try output.setSampleGroups([.aacRoll], assignments: [
                        SampleToGroupBox(groupingType: .roll, entries: [.init(sampleCount: count, groupDescriptionIndex: 1)]),
                    ], for: id)
                }
            }
            presentedTicks = layout.musicTicks
            let drifting = layout.seamErrors.filter { $0.magnitude > rule.errorBound }
            if let worst = drifting.map(\.magnitude).max() {
                warnings.append("at \(drifting.count) of \(layout.seamErrors.count) seams no layout of whole packets is both "
                                + "under \(rule.dipLimit * 1000 / UInt64(timescale)) ms of dip and within "
                                + "\(rule.errorBound * 1000 / UInt64(timescale)) ms of the part's place: the short dip "
                                + "was kept, and those parts start up to "
                                + "\(worst * 1000 / UInt64(timescale)) ms from their place (the chapters are where they "
                                + "really start)")
            }
            var place: Int64 = 0
            for (k, clip) in audio.enumerated() {
                if let places { place = places[k] }
                let error = k == 0 ? 0 : layout.seamErrors[k - 1]
                let dip = k == 0 ? 0 : layout.seamDips[k - 1]
                parts.append(.init(path: names[k], start: Double(place) / Double(timescale),
                                   duration: Double(clip.timing.presented) / Double(timescale),
                                   startError: Double(error) / Double(timescale), seamDip: Double(dip) / Double(timescale),
                                   droppedPackets: clip.samples.count - used[k]))
                if places == nil { place += Int64(clip.timing.presented) }
            }
            // The first input's tags, without its chapters; the gapless numbers of the join.
            var userData = readers[0].movie.userData.flatMap {
                CopiedBoxSanitizer.sanitize($0, depth: 2, parentPath: "moov").bytes
            }.map { Gapless.removing(["chpl"], from: $0) }
            if first.codec.kind == .aac && !hasVideo {
                let priming = first.timing.priming
                let padding = layout.mediaTicks > priming + layout.musicTicks
                    ? layout.mediaTicks - priming - layout.musicTicks : 0
                userData = Metadata.userData(userData, settingGapless: priming, padding: padding,
                                             sampleCount: layout.musicTicks)
            }
            output.userData = userData
        } else {
            for (k, start) in videoStarts.dropLast().enumerated() {
                let end = videoStarts[k + 1]
                parts.append(.init(path: names[k], start: Double(start) / Double(timescale),
                                   duration: Double(end - start) / Double(timescale), startError: 0, seamDip: 0,
                                   droppedPackets: 0))
            }
            output.userData = readers[0].movie.userData.flatMap {
                CopiedBoxSanitizer.sanitize($0, depth: 2, parentPath: "moov").bytes
            }.map { Gapless.removing(["chpl"], from: $0) }
        }
        if !hasVideo, let codec = clips[0]?.codec.kind {
            var fileType = ExtractedMovie.fileType(for: codec)
            if audiobook {
                fileType.majorBrand = "M4B "
                fileType.compatibleBrands = ["M4B ", "M4A ", .mp42, .isom]
            }
            output.fileType = fileType
            output.chunkSeconds = .infinity  // Read in order: one chunk holds at most a MiB.
        }
        _ = videoID

        var chapterCount = 0
        if options.chapters {
            let titleKey = try? TagKey.parse("title")
            var chapters: [Chapter] = []
            for (k, reader) in readers.enumerated() {
                var title = Self.fileStem(names[k])
                if let key = titleKey, let userData = reader.movie.userData,
                   case .text(let values)? = ItemList(userData: userData)[key], let text = values.first, !text.isEmpty {
                    title = text
                }
                let landing = max(parts[k].start + parts[k].startError, 0)
                chapters.append(Chapter(title: title, start: k == 0 ? 0 : landing))
            }
            let written = try ExtractedMovie.addChapters(chapters, to: &output)
            chapterCount = written.chapters.count
            if let warning = ChapterTrack.neroLimitWarning(count: chapterCount) { warnings.append(warning) }
        }
        let duration = hasAudio ? Double(presentedTicks) / Double(timescale)
            : Double(videoStarts.last ?? 0) / Double(timescale)
        writer = output
        result = ConcatResult(hasVideo: hasVideo, outputPath: "", duration: duration, audioPackets: audioPackets,
                              parts: parts, chapterCount: chapterCount, bytesWritten: 0, warnings: warnings)
    }

    /// What differs between two inputs' video, or nil: the codec, the picture size or the
    /// decoder configuration (SPS/PPS/VPS in `avcC`/`hvcC`, …).
    static func videoDifference(_ a: MediaTrack, _ b: MediaTrack) -> String? {
        guard let x = a.track.sampleDescriptions.entries.first, let y = b.track.sampleDescriptions.entries.first else {
            return "a video track without a sample description"
        }
        if x.format != y.format { return "codec \(x.format) vs \(y.format)" }
        if a.timescale != b.timescale { return "timescale \(a.timescale) vs \(b.timescale)" }
        let (headerX, boxesX) = Self.visualEntryParts(x.bytes)
        let (headerY, boxesY) = Self.visualEntryParts(y.bytes)
        if headerX != headerY { return "picture size or depth of \(x.format)" }
        if boxesX != boxesY { return "decoder configuration (SPS/PPS/VPS, colour, aspect) of \(x.format)" }
        return nil
    }

    /// A visual sample entry's fixed fields (ISO/IEC 14496-12 § 12.1.3: 78 bytes after the
    /// box header) and its child boxes but `btrt`, whose bitrates differ between clips of
    /// one encoder.
    static func visualEntryParts(_ entry: [UInt8]) -> (header: ArraySlice<UInt8>, boxes: [ArraySlice<UInt8>]) {
        let fixed = 8 + 78
        guard entry.count >= fixed else { return (entry[...], []) }
        var boxes: [ArraySlice<UInt8>] = []
        var at = fixed
        while at + 8 <= entry.count {
            let size = Int(entry[at]) << 24 | Int(entry[at + 1]) << 16 | Int(entry[at + 2]) << 8 | Int(entry[at + 3])
            guard size >= 8, at + size <= entry.count else {
                boxes.append(entry[at...])
                break
            }
            if entry[(at + 4)..<(at + 8)] != [0x62, 0x74, 0x72, 0x74][...] { boxes.append(entry[at..<(at + size)]) }
            at += size
        }
        return (entry[8..<fixed], boxes)
    }

    /// The first part's sample entry with the fields that describe that one file zeroed, as
    /// their formats allow for "unknown": FLAC's STREAMINFO frame sizes, sample count and
    /// MD5 (its minimum block size 16: each part's short last block now sits inside the
    /// stream); ALAC's maxFrameBytes and avgBitRate. Other entries are copied as they are.
    static func joinedEntry(_ entry: [UInt8], codec: AudioCodec.Kind) -> [UInt8] {
        let type: [UInt8]
        switch codec {
        case .flac: type = Array("dfLa".utf8)
        case .alac: type = Array("alac".utf8)
        default: return entry
        }
        var bytes = entry
        var at = 36  // Children of a version-0 audio sample entry (ISO/IEC 14496-12 § 12.2.3).
        while at + 8 <= bytes.count {
            let size = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard size >= 8, at + size <= bytes.count else { break }
            if Array(bytes[(at + 4)..<(at + 8)]) == type {
                let payload = at + 12  // After the full box's version and flags.
                if codec == .flac, size >= 12 + 4 + 34 {
                    let info = payload + 4
                    bytes[info] = 0
                    bytes[info + 1] = 16
                    for i in 4..<10 { bytes[info + i] = 0 }  // Minimum and maximum frame sizes.
                    bytes[info + 13] &= 0xF0  // The sample count's high 4 bits,
                    for i in 14..<34 { bytes[info + i] = 0 }  // its low 32, and the MD5.
                } else if codec == .alac, size >= 12 + 24 {
                    for i in 12..<20 { bytes[payload + i] = 0 }
                }
                return bytes
            }
            at += size
        }
        return bytes
    }

    /// `…/NAME.EXT` → `NAME`.
    static func fileStem(_ path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return name
    }

    /// Writes the file into `sink`; returns its size.
    func write(into sink: inout some MovieSink, progress: ((RemuxProgress) -> Void)?,
               isCancelled: () -> Bool) throws(RemuxError) -> UInt64 {
        try writer.writeProgressive(into: &sink, progress: progress, isCancelled: isCancelled)
    }
}
