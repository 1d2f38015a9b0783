import ISOBMFF

/// Copies the tracks of a movie into a new MP4 or MOV without re-encoding, optionally cut to
/// a time range (issue 14): the `remux` recipe over `MovieReader` and `MovieWriter`.
///
/// A cut copies each track from the sample its decoder must start at (`CutPlan`: the
/// video's sync sample at or before `from`, found in presentation time; the audio's
/// pre-roll) and writes edit lists that present exactly `[from, to)`: the first edit of
/// every track hides what precedes `from`, all tracks end at `to`.
///
/// ```swift
/// let range = CutRange(from: CutTime(nanoseconds: 65_000_000_000), to: try CutTime(parsing: "1:20.5"))
/// let result = try Remux.run(from: "in.mp4", to: "clip.mp4", options: RemuxOptions(range: range))
/// ```
public enum Remux {
    /// QuickTime-only audio formats: an `.mp4` cannot carry them (ISO/IEC 14496-14 knows no
    /// big- or little-endian PCM entry of this kind).
    static let quickTimeOnlyFormats: Set<String> = ["twos", "sowt", "in24", "in32", "fl32", "fl64", "raw ", "lpcm"]

    /// Writes the tracks of `inputPath` that `options` keeps to `outputPath`, published
    /// atomically (nothing is left behind on failure).
    ///
    /// - Throws: ``RemuxError``: `.invalidArgument` for a range that is empty or outside
    ///   the input or a track ID it lacks; `.invalidInput`/`.truncatedInput` for a broken
    ///   input; `.destinationExists`, `.sameFile`, `.ioError`; `.cancelled` when
    ///   `isCancelled` said so (nothing is left behind).
    /// - Parameters:
    ///   - inputPath: the MP4 or MOV to read; it must be a regular file.
    ///   - outputPath: the file to create (`.mov` for a QuickTime movie); its folder must exist.
    ///   - options: the range, the tracks, the layout, metadata and overwriting.
    ///   - progress: called as the file is written, with the sample bytes written so far and
    ///     in all (``RemuxProgress``, as every recipe reports).
    ///   - isCancelled: polled while writing; when it returns true the remux stops, removes
    ///     its temporary file and throws ``RemuxError/Code/cancelled``.
    @discardableResult
    public static func run(from inputPath: String, to outputPath: String,
                           options: RemuxOptions = RemuxOptions(), progress: ((RemuxProgress) -> Void)? = nil,
                           isCancelled: () -> Bool = { false }) throws(RemuxError) -> RemuxResult {
        try bridged {
            let input = try InputFile(path: inputPath)
            if let existing = FileIdentity(path: outputPath), existing == input.identity {
                throw RemuxError(.sameFile, "\(input.path) and \(outputPath) are the same file")
            }
            try Destination.check(outputPath, overwrite: options.overwrite)
            let reader: MovieReader<InputFile>
            do {
                reader = try MovieReader(reading: input)
            } catch {
                throw FileSignature.explain(RemuxError(bridging: error), source: input).naming(input.path)
            }
            var writer = MovieWriter(movieTimescale: reader.movie.header.timescale)
            let result = try naming(input.path) {
                try parse { try plan(reader, name: input.path, output: outputPath, options: options, writer: &writer) }
            }
            let sink = try MovieFileSink(destination: outputPath, overwrite: options.overwrite, sources: [input])
            var target = sink
            let layout = options.fragmentSeconds.map { MovieWriter.Layout.fragmented(seconds: $0, segmentIndex: false) }
            var written: UInt64 = 0
            do {
                try writer.finish(layout ?? .progressive, into: &target, progress: { state in
                    written = state.bytesDone
                    progress?(RemuxProgress(state))
                }, isCancelled: isCancelled)
            } catch {
                throw RemuxError(bridging: error, naming: input.path)
            }
            try sink.publish()
            var done = result
            done.bytesWritten = written
            return done
        }
    }

    /// The `async` form of ``run(from:to:options:progress:isCancelled:)``: it honours the
    /// calling task's cancellation, removing the temporary file, and reports progress to
    /// `progress` (called on the writing thread). The blocking file I/O runs on a thread of
    /// its own, not on the cooperative pool.
    @discardableResult
    public static func run(from inputPath: String, to outputPath: String, options: RemuxOptions = RemuxOptions(),
                           progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(RemuxError) -> RemuxResult {
        try await onOwnThread { isCancelled throws(RemuxError) in
            try run(from: inputPath, to: outputPath, options: options, progress: progress, isCancelled: isCancelled)
        }
    }

    /// Copies the tracks of `source` that `options` keeps into `sink`, as
    /// ``run(from:to:options:progress:isCancelled:)`` writes a file: the same plan over any
    /// byte source (memory, an app's own storage), nothing touching a file system. `name`
    /// calls the output in messages and decides, by its extension (`.mov`), a QuickTime
    /// movie when ``RemuxOptions/quickTime`` is nil. The caller owns the sink: on error,
    /// what was written so far is incomplete. The result's ``RemuxResult/outputPath`` is `name`.
    ///
    /// - Throws: ``RemuxError``, as ``run(from:to:options:progress:isCancelled:)`` throws.
    @discardableResult
    public static func run<Source: ByteSource>(from source: Source, to sink: inout some ByteSink,
                                               name: String = "output.mp4", options: RemuxOptions = RemuxOptions(),
                                               bufferSize: Int = 1 << 20, progress: ((RemuxProgress) -> Void)? = nil,
                                               isCancelled: () -> Bool = { false }) throws(RemuxError) -> RemuxResult {
        try bridged {
            let reader: MovieReader<Source>
            do {
                reader = try MovieReader(reading: source)
            } catch {
                throw FileSignature.explain(RemuxError(bridging: error), source: source).naming(source.name)
            }
            var writer = MovieWriter(movieTimescale: reader.movie.header.timescale)
            var result = try naming(source.name) {
                try parse { try plan(reader, name: source.name, output: name, options: options, writer: &writer) }
            }
            var target = CopyingMovieSink(sink: sink, sources: [source], bufferSize: max(bufferSize, 64 << 10))
            defer {
                sink = target.sink
                target.deallocate()
            }
            let layout = options.fragmentSeconds.map { MovieWriter.Layout.fragmented(seconds: $0, segmentIndex: false) }
            do {
                try writer.finish(layout ?? .progressive, into: &target, progress: progress.map { progress in
                    { progress(RemuxProgress($0)) }
                }, isCancelled: isCancelled)
            } catch {
                throw RemuxError(bridging: error, naming: source.name)
            }
            try target.flush()
            result.bytesWritten = target.position
            return result
        }
    }

    /// Adds the kept tracks of `reader` to `writer`, cut as `options` says.
    static func plan(_ reader: MovieReader<some ByteSource>, name: String, output: String, options: RemuxOptions,
                     writer: inout MovieWriter) throws -> RemuxResult {
        let movie = reader.movie
        let quickTime = options.quickTime ?? (extensionOf(output) == "mov")
        var notes: [String] = []
        var warnings: [String] = []
        for id in options.trackIDs where reader.track(id: id) == nil {
            let ids = reader.tracks.map { String($0.id) }.joined(separator: ", ")
            throw RemuxError(.invalidArgument, "\(name) has no track with ID \(id) (its tracks: \(ids))")
        }
        var kept: [MediaTrack] = []
        var dropped: [RemuxResult.DroppedTrack] = []
        var damage: RemuxError?  // The first dropped track's damage: the error when nothing else is left.
        // A damaged track the user did not name is left out with a warning, the others written
        // as if it were not there (issue 32); named with --track, or the one audio track of an
        // audio-only copy, its damage is the error, as before.
        func droppable(_ track: MediaTrack) -> Bool {
            !options.audioOnly && !options.trackIDs.contains(track.id)
        }
        func drop(_ track: MediaTrack, _ error: ISOBMFFError) {
            let track = RemuxResult.DroppedTrack(track, damage: error)
            dropped.append(track)
            damage = damage ?? RemuxError(bridging: error).prefixed(name)
            warnings.append(track.warning)
        }
        var soundEntries: [UInt32: [[UInt8]]] = [:]
        var refused: RemuxError?
        // The input's chapter tracks go when the chapters are replaced or removed, or the
        // metadata dropped: the text tracks another track names in tref/chap.
        var chapterTracks = Set<UInt32>()
        if options.tags.chapters != nil || options.tags.removingChapters || !options.keepMetadata {
            chapterTracks = Set(Track.chapterTracks(in: reader.tracks.map(\.track)).map(\.trackID))
        }
        for track in reader.tracks {
            if !options.trackIDs.isEmpty && !options.trackIDs.contains(track.id) { continue }
            if chapterTracks.contains(track.id) { continue }
            if options.dropAudio && track.kind == .audio { continue }
            if options.dropVideo && track.kind == .video { continue }
            if options.audioOnly && track.kind != .audio { continue }
            if let problem = track.problem, droppable(track) {
                drop(track, problem)
                continue
            }
            let format = track.format?.description ?? "?"
            if !quickTime && (track.kind == .timecode || quickTimeOnlyFormats.contains(format)) {
                warnings.append("track \(track.id) (\(format)) was dropped: an .mp4 cannot carry it (name the "
                                + "output .mov to keep it)")
                continue
            }
            if track.kind == .audio {
                do {
                    soundEntries[track.id] = try CopiedTrack.checkedSoundEntries(
                        of: track.track, quickTimeLayout: movie.usesQuickTimeLayout,
                        quickTimeOutput: quickTime && !options.audioOnly)
                } catch let error as RemuxError {
                    let reason = RemuxError(error.code, "\(name): track \(track.id) (\(format)): \(error.message)",
                                            parseError: error.parseError)
                    if options.trackIDs.contains(track.id) { throw reason }
                    warnings.append("track \(track.id) (\(format)) was dropped: \(error.message)")
                    refused = refused ?? reason
                    continue
                }
            }
            kept.append(track)
        }
        if options.audioOnly {
            guard let first = kept.first else {
                throw refused ?? RemuxError(.noAudioTrack, "\(name) has no audio track")
            }
            kept = [first]
        }
        if kept.isEmpty, let refused = refused ?? damage { throw refused }
        guard !kept.isEmpty else {
            throw RemuxError(.invalidArgument, "no track of \(name) is left to write")
        }
        // Indexes and presentations first: the output's movie timescale depends on them.
        var indexes: [SampleIndex] = []
        var presentations: [TrackPresentation] = []
        var readable: [MediaTrack] = []
        for track in kept {
            do {
                // A fragmented input cut inside a fragment: its fragments hold together, so the
                // reader's index silently ends before the cut. A whole remux has no salvage (a
                // partial copy must not pass for a whole one): refused, as a cut regular file
                // is. A range keeps what the whole samples hold of it, and says so.
                // No sample time or edit of a track counting in 0 ticks a second means anything
                // (the writer refuses it): damage, like a broken table.
                guard track.timescale > 0 else {
                    throw ISOBMFFError(.invalidValue, "the media timescale is 0", path: track.track.path + "/mdia/mdhd",
                                       offset: nil)
                }
                let (samples, truncation) = movie.isFragmented ? try reader.wholeSamples(of: track)
                    : (try reader.samples(of: track), nil)
                if let truncation {
                    guard options.range != nil else {
                        throw RemuxError(.truncatedInput, "\(name) is truncated: \(truncation.message); a remux "
                                         + "copies whole inputs only (an extraction with salvage recovers the audio "
                                         + "before the cut)", parseError: truncation)
                    }
                    warnings.append("the file is truncated: \(truncation.message); track \(track.id) keeps what its "
                                    + "whole samples hold of the range")
                }
                indexes.append(samples)
                let presentation = reader.presentation(of: track, samples: samples)
                warnings += presentation.warnings
                presentations.append(presentation)
                readable.append(track)
            } catch let error as ISOBMFFError {
                // A file cut short is not one damaged track: a remux copies whole inputs only.
                let cut = !movie.isFragmented && (try? reader.wholeSamples(of: track))?.truncation != nil
                guard droppable(track), !cut else { throw RemuxError(bridging: error).prefixed(name) }
                drop(track, error)
            }
        }
        if readable.isEmpty, let damage { throw damage }
        kept = readable
        // A cut's edits are exact to the sample when the movie timescale is a multiple of
        // every track's (the least common multiple, where FFmpeg can read it); so is an edit
        // made from iTunSMPB (it counts samples).
        var movieTimescale = movie.header.timescale
        if options.range != nil || presentations.contains(where: \.isFromGaplessInfo) {
            movieTimescale = ISOBMFF.movieTimescale(forTracksOf: kept.map(\.timescale)) ?? movieTimescale
        }
        writer = MovieWriter(movieTimescale: movieTimescale)
        if options.audioOnly {
            // The input's brands (an extraction's output picked them by codec).
            writer.fileType = movie.fileType ?? FileTypeBox(majorBrand: "M4A ", minorVersion: 512,
                                                            compatibleBrands: ["M4A ", "mp42", "isom"])
        } else if quickTime {
            writer.fileType = movie.fileType?.isQuickTime == true ? movie.fileType
                : FileTypeBox(majorBrand: "qt  ", minorVersion: 0x200, compatibleBrands: ["qt  "])
        }
        if options.keepMetadata {
            for (box, label) in [(movie.userData, "udta"), (movie.metadata, "meta")] {
                guard let box else { continue }
                let clean = CopiedBoxSanitizer.sanitize(box, depth: 2, parentPath: "moov")
                warnings += clean.warnings
                if label == "udta" { writer.userData = clean.bytes } else { writer.metadata = clean.bytes }
            }
            // Nero chapters and iTunSMPB describe the whole input: a cut's chapter track is
            // cut with it, and its edit lists say what iTunSMPB said.
            if options.range != nil, let userData = writer.userData {
                writer.userData = Metadata.userData(removingGaplessFrom: Gapless.removing(["chpl"], from: userData))
            }
        }
        writer.userData = try options.tags.userData(writer.userData)
        var newIDs: [UInt32: UInt32] = [:]
        for (index, track) in kept.enumerated() { newIDs[track.id] = UInt32(index + 1) }
        var tracks: [RemuxResult.Track] = []
        var duration = 0.0
        var anyPresented = false
        // Fragments place every track on one clock from its `tfdt`: the range counts from the
        // file's start, where its first track starts, for every track alike.
        let offsets = options.range != nil && movie.isFragmented
            ? CutPlan.timelineOffsets(of: kept.indices.map {
                CutPlan.TimelineTrack(samples: indexes[$0], presentation: presentations[$0], timescale: kept[$0].timescale)
            }) : kept.map { _ in Int64(0) }
        for (n, track) in kept.enumerated() {
            let samples = indexes[n]
            let presentation = presentations[n]
            let boxes: SampleTableBoxes?
            if movie.isFragmented {
                boxes = nil
            } else {
                boxes = try? track.track.sampleTable()
            }
            var range = 0..<samples.count
            var edits: [EditListBox.Entry]?
            var seconds = presentation.seconds
            var presentedTicks: UInt64?
            // An audio cut's pre-roll: the copied samples after the first, up to the one that
            // presents `from`, written as non-sync samples (see below); for video, the samples
            // the container marked sync that the bitstream refused.
            var preRollFollowers = 0..<0
            var editRounding = 0.0
            // A cut's audio counted in its sample rate where its timescale is another one
            // (``SampleRateTimescale``: FFmpeg skips an edit's media time as samples).
            var retimed: SampleRateTimescale?
            if let cut = options.range {
                let preRoll = PreRoll(track: track, sampleGroups: boxes?.sampleGroupDescriptions ?? [],
                                      hasSyncTable: track.kind != .audio && boxes?.syncSamples != nil)
                let plan: CutPlan?
                do {
                    plan = try CutPlan(samples: samples, presentation: presentation, timescale: track.timescale,
                                       movieTimescale: presentation.segmentTimescale,
                                       outputMovieTimescale: movieTimescale, range: cut, preRoll: preRoll,
                                       timelineOffset: offsets[n])
                } catch let failure as CutPlan.Failure {
                    throw RemuxError(bridging: failure).prefixed("\(name): track \(track.id) cannot be cut")
                }
                guard var plan else {
                    notes.append("track \(track.id) presents nothing between \(cut.from) and "
                                 + "\(cut.to.map { "\($0)" } ?? "the end") s: left out")
                    continue
                }
                if track.kind == .video {
                    // Containers lie about key frames: the frame the copy starts from must be
                    // one by its bitstream, else the cut starts further back.
                    var buffer: [UInt8] = []
                    let marked = plan.samples.lowerBound
                    let wrong: [Int]
                    do {
                        wrong = try plan.startAtKeyFrame(in: samples) { i in
                            try reader.bitstreamKeyFrame(samples[i], of: track, buffer: &buffer)
                        }
                    } catch let error as ISOBMFFError {
                        throw RemuxError(bridging: error).prefixed(name)
                    }
                    if !wrong.isEmpty {
                        warnings.append("track \(track.id): sample \(wrong[0] + 1) is marked as a sync sample, but its "
                                        + "bitstream says it needs earlier frames (the container's sync marks are "
                                        + "wrong); the cut starts at sample \(plan.samples.lowerBound + 1), a key frame")
                        // Written as they are: not sync samples. A player seeks to the sync sample
                        // at or before the edit's start (FFmpeg's mov_fix_index, GStreamer's
                        // qtdemux) and would otherwise start at the false one.
                        preRollFollowers = (plan.samples.lowerBound + 1)..<(marked + 1)
                    }
                }
                if plan.startsBeforeFirstSync {
                    notes.append("track \(track.id): the cut starts at \(cut.from) s, before its first sync sample; "
                                 + "the copy starts at its first frame, which players may not show cleanly")
                }
                range = plan.samples
                if track.kind == .audio, plan.firstPresented > range.lowerBound {
                    preRollFollowers = (range.lowerBound + 1)..<(plan.firstPresented + 1)
                }
                edits = plan.edits
                editRounding = plan.editRounding
                seconds = Double(plan.presentedTicks) / Double(track.timescale)
                presentedTicks = plan.presentedTicks
                anyPresented = true
                if track.kind == .audio, let entry = track.track.sampleDescriptions.entries.first,
                   let codec = try? AudioCodec(entry: entry, quickTimeLayout: movie.usesQuickTimeLayout),
                   let retiming = SampleRateTimescale(copying: range, of: samples, timescale: track.timescale,
                                                      rate: codec.sampleRate),
                   let mapped = retiming.edits(plan.edits),
                   let ticks = rescale(plan.presentedTicks, from: track.timescale, to: retiming.rate) {
                    retimed = retiming
                    edits = mapped
                    presentedTicks = ticks
                    notes.append(retiming.note(track: track.id))
                }
            } else {
                // The edits as the one presentation rule reads them (an edit made from
                // iTunSMPB too), in the output's movie timescale; none when it presents the
                // track whole.
                if !presentation.edits.isEmpty {
                    guard let converted = presentation.edits(in: movieTimescale) else {
                        throw RemuxError(.unsupportedInput, "\(name): the edit list of track \(track.id) does not "
                                         + "fit the output's movie timescale")
                    }
                    edits = converted
                    editRounding = worstEditRounding(of: converted, in: movieTimescale, from: presentation.edits,
                                                     in: presentation.segmentTimescale)
                }
                anyPresented = true
            }
            var description = CopiedTrack.description(of: track.track, quickTimeLayout: movie.usesQuickTimeLayout,
                                                      soundEntries: soundEntries[track.id], notes: &warnings)
            description.references = track.track.references.compactMapValues { ids in
                let ids = ids.compactMap { newIDs[$0] }
                return ids.isEmpty ? nil : ids
            }
            if options.range == nil, !movie.isFragmented, track.track.mediaHeader.duration > 0 {
                // A whole copy keeps the media's stated duration (mdhd) where it is not the
                // samples' sum: players take the last sample's length from it (FFmpeg's
                // mov_read_stts: a last sample of duration 0, or one the header ends early).
                // It is a header field: nothing is sized or walked by it.
                description.mediaDuration = track.track.mediaHeader.duration
            }
            if let retimed { description.timescale = retimed.rate }
            let id = try writer.addTrack(description)
            newIDs[track.id] = id
            try writer.setEdits(edits, for: id)
            if let boxes, !boxes.sampleGroupDescriptions.isEmpty {
                let groups = options.range == nil ? boxes.sampleToGroups
                    : CutPlan.slice(boxes.sampleToGroups, to: range)
                try writer.setSampleGroups(boxes.sampleGroupDescriptions, assignments: groups, for: id)
            }
            var iterator = samples.makeIterator(from: range.lowerBound)
            var copied = 0
            var empty = 0
            var ticks: UInt64 = 0
            while copied < range.count, var sample = iterator.next() {
                // A player that starts at the sync sample at or before the edit's start
                // (GStreamer's qtdemux) decodes the pre-roll only when the samples after it
                // are not sync samples: with every audio packet a sync sample it started at
                // the packet presenting `from` and decoded its first frames cold. Every
                // other sample keeps its flag, so seeking elsewhere is unchanged.
                if preRollFollowers.contains(range.lowerBound + copied) { sample.isSync = false }
                if let retimed { sample.duration = retimed.durations[copied] }
                try writer.append(sample, from: 0, to: id)
                copied += 1
                if sample.size == 0 { empty += 1 }
                ticks &+= UInt64(sample.duration)  // A checked table's total fits in 64 bits.
            }
            if empty > 0, options.fragmentSeconds != nil {
                // The writer leaves them out of the fragments' runs (FFmpeg refuses a run that
                // lists one), their time given to a neighbour.
                warnings.append("track \(track.id): \(empty) empty sample(s) (0 bytes) left out of the fragments, "
                                + "their time given to the sample before")
            }
            var written = RemuxResult.Track(inputID: track.id, outputID: id, format: track.format?.description ?? "?",
                                            sampleCount: copied, seconds: seconds)
            written.timescale = retimed?.rate ?? track.timescale
            written.mediaTicks = ticks
            written.skippedTicks = edits?.first { !$0.isEmpty }.map { UInt64(clamping: $0.mediaTime) } ?? 0
            written.presentedTicks = presentedTicks
                ?? CutTime(clampingSeconds: seconds).ticks(track.timescale) ?? UInt64.max
            written.editRounding = editRounding
            tracks.append(written)
            duration = max(duration, seconds)
        }
        if let chapters = options.tags.chapters {
            let written = try ExtractedMovie.addChapters(chapters, to: &writer)
            warnings += ChapterTrack.neroLimitWarning(count: written.chapters.count).map { [$0] } ?? []
        } else if options.tags.removingChapters, let userData = writer.userData {
            writer.userData = NeroChapters.userData(userData, replacingWith: nil)
        }
        guard anyPresented, !tracks.isEmpty else {
            // Each track's end on the file's timeline (its offset moves it there).
            let end = reader.tracks.isEmpty ? 0 : kept.indices.map {
                presentations[$0].seconds - Double(offsets[$0]) / Double(kept[$0].timescale)
            }.max() ?? 0
            throw RemuxError(.invalidArgument, "the range \(options.range.map { "\($0.from)" } ?? "0") – "
                             + "\(options.range?.to.map { "\($0)" } ?? "end") s is outside \(name), which lasts "
                             + "\(formatSeconds(end)) s")
        }
        let rounding = tracks.map(\.editRounding).max() ?? 0
        if rounding > 0 {
            notes.append("the edits count in a movie timescale of \(movieTimescale), not a multiple of every track's: "
                         + "rounded by up to \(formatMicroseconds(rounding)) µs")
        }
        return RemuxResult(outputPath: output, tracks: tracks, duration: duration, bytesWritten: 0, notes: notes,
                           warnings: warnings, droppedTracks: dropped)
    }

    static func formatMicroseconds(_ seconds: Double) -> String {
        MediaTime.text(seconds: seconds * 1e6, decimals: 1)
    }

    static func extensionOf(_ path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }
}
