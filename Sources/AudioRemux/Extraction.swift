import ISOBMFF

/// One extraction, planned: the input parsed, the track chosen and checked, the output
/// planned in a `MovieWriter` (``ExtractedMovie``), whole or cut to
/// ``ExtractionOptions/range`` (``cut(_:name:)``). Nothing has been written yet;
/// ``write(from:to:bufferSize:progress:isCancelled:)`` streams the output.
struct Extraction {
    private(set) var movie: Movie
    private(set) var track: Track
    let table: SampleTable
    let codec: AudioCodec
    private(set) var output: ExtractedMovie
    /// What a cut of the same input is planned from (``cut(_:name:)``).
    private let entries: [[UInt8]]
    private let entryIndex: [UInt32: UInt32]
    private let mediaDuration: UInt64
    private let outputTimescale: UInt32?
    private let presentation: TrackPresentation
    private let preRoll: PreRoll
    private let keepsGaplessItem: Bool
    /// Where a cut's 0 lies in the track's presentation, in media ticks: the file's start,
    /// where its first track starts, for a fragmented input (``CutPlan/timelineOffsets(of:)``);
    /// else 0.
    private let timelineOffset: Int64
    /// The cut's notes (edits rounded in the output's movie timescale).
    private var cutNotes: [String] = []

    let salvage: SalvageReport?
    let extras: OutputExtras
    /// What the presentation rule ignored or fitted in the input's edit list, after what
    /// reading the input tolerated (a second `moov`, ``Movie/warnings``).
    let presentationWarnings: [String]
    /// Audio tracks before the chosen one left out because their boxes are damaged (the
    /// first audio track asked for, and the first is damaged).
    let droppedTracks: [RemuxResult.DroppedTrack]

    /// - Parameter name: how to call the input in messages (its path).
    init(source: some ByteSource, options: ExtractionOptions, name: String) throws {
        do {
            movie = try parse { try Movie(reading: source) }
        } catch {
            throw FileSignature.explain(error, source: source)
        }
        var dropped: [RemuxResult.DroppedTrack] = []
        track = try Self.select(options.track, in: movie, source: source, name: name, dropped: &dropped)
        droppedTracks = dropped
        try Self.checkSamplesAreInFile(track)
        (table, salvage) = try Self.sampleTable(of: track, in: movie, source: source, salvage: options.salvage,
                                                name: name)
        try Self.checkHasSamples(table, of: track, in: movie, name: name)
        let sizes = table.boxes.sampleSizes
        if sizes.constantSize == 0, let empty = sizes.sizes.firstIndex(of: 0) {
            let location = table.boxes.locations[.stsz] ?? table.boxes.locations[.stz2]
            throw RemuxError(bridging: ISOBMFFError(.invalidSampleTable, "audio sample \(empty + 1) is empty (size 0): no codec "
                                          + "this tool copies has empty packets", path: location?.path ?? track.path,
                                          offset: location?.offset))
        }

        // Each sample entry the track uses must be AAC; unused entries are dropped.
        var entries: [[UInt8]] = []
        var entryIndex: [UInt32: UInt32] = [:]
        var codec: AudioCodec?
        for run in table.boxes.sampleToChunk.entries where entryIndex[run.sampleDescriptionIndex] == nil {
            let original = track.sampleDescriptions.entries[Int(run.sampleDescriptionIndex) - 1]  // Validated.
            let parsed = try AudioCodec(entry: original, quickTimeLayout: movie.usesQuickTimeLayout)
            codec = codec ?? parsed
            entries.append(parsed.outputEntry(original: original))
            entryIndex[run.sampleDescriptionIndex] = UInt32(entries.count)
        }
        if codec == nil, let first = track.sampleDescriptions.entries.first {
            let parsed = try AudioCodec(entry: first, quickTimeLayout: movie.usesQuickTimeLayout)
            codec = parsed
            entries.append(parsed.outputEntry(original: first))
        }
        guard var codec else {
            throw RemuxError(.invalidInput, "\(track.path): the audio track has no sample description")
        }
        codec.refine(firstPacket: Self.firstPacketHeader(table, source: source))
        self.codec = codec
        // The one presentation rule (shared with probe): an edit list that overflows or points
        // outside the media is ignored, and the track presented whole, with a warning; without
        // an edit list, an iTunSMPB item gives the priming and the valid samples.
        let presentation = Self.presentation(of: track, in: movie, table: table)
        self.presentation = presentation
        // What a decoder needs before a cut's first presented packet, by the track's roll
        // group (or the one written for AAC) and its codec.
        // The output's first entry: the ISO entry extraction writes (a QuickTime or damaged
        // esds rewritten), whose configuration says the codec's own pre-roll.
        let groups = ExtractedMovie.sampleGroups(of: table, codec: codec.kind).descriptions
        let first = entries.first.map { bytes in
            let type = bytes.count >= 8 ? bytes[4..<8].reduce(0 as UInt32) { $0 << 8 | UInt32($1) } : 0
            return SampleDescription(entry: .init(format: FourCC(rawValue: type), bytes: bytes), kind: .audio,
                                     quickTimeLayout: false)
        }
        preRoll = PreRoll(kind: .audio, description: first, timescale: track.mediaHeader.timescale,
                          sampleGroups: groups)
        track.editList = presentation.editList(replacing: track.editList)
        presentationWarnings = droppedTracks.map(\.warning) + movie.warnings.map(\.description) + presentation.warnings
        // An edit made from iTunSMPB counts samples: the output's movie timescale is the
        // media's, so that the edit presents exactly the valid samples.
        let outputTimescale = presentation.isFromGaplessInfo ? track.mediaHeader.timescale : nil
        let mediaDuration = Self.mediaDuration(of: track, table: table, movie: movie, salvage: salvage)
        var extras = options.keepMetadata
            ? try Self.extras(of: track, in: movie, source: source, table: table, codec: codec, name: name) : OutputExtras()
        extras.userData = try options.tags.userData(extras.userData)
        if options.tags.chapters != nil || options.tags.removingChapters {
            // Both forms replaced (or removed): the input's chapter track and chpl go.
            extras.chapterTrack = nil
            extras.userData = NeroChapters.userData(extras.userData, replacingWith: nil)
            extras.newChapters = options.tags.chapters
        }
        self.extras = extras
        keepsGaplessItem = options.keepMetadata && Metadata.hasGaplessItem(extras.userData)
        // Before the tables' bytes go: the other tracks place the file's clock.
        timelineOffset = options.range != nil && movie.isFragmented
            ? Self.timelineOffset(of: track, in: movie, source: source) : 0
        // The tables are parsed: let the memory of the raw moov go before building the output's.
        movie.releaseSampleTableBytes()
        track.releaseSampleTableBytes()
        if !options.keepMetadata {
            // Creation and modification times say when and (with a phone) roughly where a
            // recording was made: metadata, not playback.
            movie.header.creationTime = 0
            movie.header.modificationTime = 0
            track.header.creationTime = 0
            track.header.modificationTime = 0
            track.mediaHeader.creationTime = 0
            track.mediaHeader.modificationTime = 0
        }
        self.entries = entries
        self.entryIndex = entryIndex
        self.mediaDuration = mediaDuration
        self.outputTimescale = outputTimescale
        var cut: AudioCutPlan?
        if let range = options.range {
            cut = try Self.cutPlan(range, of: track, in: movie, table: table, presentation: presentation,
                                   codec: codec, preRoll: preRoll, gaplessTimescale: outputTimescale,
                                   setsGaplessItem: keepsGaplessItem, timelineOffset: timelineOffset, name: name)
        }
        cutNotes = cut.map(Self.notes(of:)) ?? []
        output = try ExtractedMovie(movie: movie, track: track, table: table, entries: entries,
                                    entryIndex: entryIndex, codec: codec.kind, mediaDuration: mediaDuration,
                                    movieTimescale: outputTimescale, extras: extras, cut: cut)
    }

    /// This extraction cut to `range` (an audio cut, issue 14): the same input, track,
    /// checks and metadata, only the samples covering the range plus the decoder's pre-roll
    /// copied, with an edit list presenting exactly `[from, to)` (``AudioCutPlan``).
    ///
    /// - Throws: ``RemuxError``: `.invalidArgument` when the track presents nothing in the
    ///   range, `.unsupportedInput` when its edit list cannot be cut (``CutPlan/Failure``).
    func cut(_ range: CutRange, name: String) throws -> Extraction {
        let plan = try Self.cutPlan(range, of: track, in: movie, table: table, presentation: presentation,
                                    codec: codec, preRoll: preRoll, gaplessTimescale: outputTimescale,
                                    setsGaplessItem: keepsGaplessItem, timelineOffset: timelineOffset, name: name)
        var cut = self
        cut.cutNotes = Self.notes(of: plan)
        cut.output = try ExtractedMovie(movie: movie, track: track, table: table, entries: entries,
                                        entryIndex: entryIndex, codec: codec.kind, mediaDuration: mediaDuration,
                                        movieTimescale: outputTimescale, extras: extras, cut: plan)
        return cut
    }

    /// ``timelineOffset`` of `track` in a fragmented `movie`: every track's samples and
    /// presentation read again (the fragments walked once more), for a cut only. 0 where a
    /// track cannot be read: its own clock, as before.
    static func timelineOffset(of track: Track, in movie: Movie, source: some ByteSource) -> Int64 {
        let reader = MovieReader(movie: movie, source: source)
        var timeline: [CutPlan.TimelineTrack] = []
        var chosen: Int?
        for media in reader.tracks where media.timescale > 0 {
            guard let samples = try? reader.samples(of: media), samples.count > 0 else { continue }
            if media.id == track.trackID { chosen = timeline.count }
            timeline.append(.init(samples: samples, presentation: reader.presentation(of: media, samples: samples),
                                  timescale: media.timescale))
        }
        guard let chosen else { return 0 }
        return CutPlan.timelineOffsets(of: timeline)[chosen]
    }

    /// What the user may want to know of a cut: its edits rounded in the output's timescale,
    /// its timescale changed to the sample rate.
    static func notes(of cut: AudioCutPlan) -> [String] {
        let retimed = cut.retimed.map { [$0.note(track: nil)] } ?? []
        guard cut.plan.editRounding > 0 else { return retimed }
        return retimed + ["the edits count in a movie timescale of \(cut.movieTimescale), not a multiple of the track's: "
                + "rounded by up to \(Remux.formatMicroseconds(cut.plan.editRounding)) µs"]
    }

    /// The cut of `track` to `range`, over the input's own samples (`table`) and the one
    /// presentation rule's reading of it (``CutPlan``): the output's edits count in the
    /// track's timescale (``movieTimescale(forTracksOf:)``), exact to the sample; the copy
    /// counted in `codec`'s sample rate where the track's timescale is another
    /// (``SampleRateTimescale``: FFmpeg skips an edit's media time as samples; a Smooth
    /// Streaming track counts in 10 MHz).
    static func cutPlan(_ range: CutRange, of track: Track, in movie: Movie, table: SampleTable,
                        presentation: TrackPresentation, codec: AudioCodec, preRoll: PreRoll,
                        gaplessTimescale: UInt32?, setsGaplessItem: Bool, timelineOffset: Int64 = 0,
                        name: String) throws -> AudioCutPlan {
        let samples = try parse { try SampleIndex(table: table) }
        let timescale = track.mediaHeader.timescale
        let movieTimescale = ISOBMFF.movieTimescale(forTracksOf: [timescale])
            ?? ExtractedMovie.movieTimescale(of: track, in: movie, gaplessTimescale: gaplessTimescale)
        let plan: CutPlan?
        do {
            // Without edits the segment timescale counts nothing; the media's stands in.
            plan = try CutPlan(samples: samples, presentation: presentation, timescale: timescale,
                               movieTimescale: presentation.edits.isEmpty ? timescale : presentation.segmentTimescale,
                               outputMovieTimescale: movieTimescale, range: range, preRoll: preRoll,
                               timelineOffset: timelineOffset)
        } catch let failure as CutPlan.Failure {
            throw RemuxError(bridging: failure).prefixed("\(name): track \(track.trackID) cannot be cut")
        }
        guard let plan else {
            let end = presentation.seconds - (timescale > 0 ? Double(timelineOffset) / Double(timescale) : 0)
            throw RemuxError(.invalidArgument, "the range \(range.from) – \(range.to.map { "\($0)" } ?? "end") s is "
                             + "outside \(name), which lasts \(formatSeconds(end)) s")
        }
        var cut = AudioCutPlan(samples: samples, plan: plan, movieTimescale: movieTimescale,
                               setsGaplessItem: setsGaplessItem)
        cut.retimed = SampleRateTimescale(copying: plan.samples, of: samples, timescale: timescale,
                                          rate: codec.sampleRate)
        return cut
    }

    /// Writes the whole output file to `sink`, reading the samples from `source`, and
    /// returns its size.
    ///
    /// The copy is the package's one loop (``CopyingMovieSink``); where `source` is a file,
    /// a ``Prefetcher`` runs ahead of it over the audio's ranges.
    func write(from source: some ByteSource, to sink: inout some ByteSink, bufferSize: Int,
               progress: ((RemuxProgress) -> Void)?, isCancelled: @escaping () -> Bool) throws -> UInt64 {
        var target = CopyingMovieSink(sink: sink, sources: [source], bufferSize: bufferSize)
        defer {
            sink = target.sink
            target.deallocate()
        }
        target.isCancelled = isCancelled
        let copied = output.samples
        let isWhole = copied.count == table.sampleCount
        // The read-ahead follows the whole table's chunks; a cut reads only some of them.
        if source.fileDescriptor != nil, isWhole { target.prefetcher = Prefetcher(table) }
        if let progress {
            // Every copied byte is audio (the chapters are written from memory), in sample
            // order: a sample is done once the bytes copied reach its end.
            let sizes = table.boxes.sampleSizes
            let total = isWhole ? table.totalSampleBytes
                : copied.reduce(0 as UInt64) { $0 + UInt64(sizes.size(ofSample: $1)) }  // ≤ the table's total.
            var bytesDone: UInt64 = 0
            var samplesDone = 0
            var samplesEnd: UInt64 = 0
            target.copied = { count in
                bytesDone += count
                while samplesDone < copied.count {
                    let end = samplesEnd + UInt64(sizes.size(ofSample: copied.lowerBound + samplesDone))
                    guard end <= bytesDone else { break }
                    samplesEnd = end
                    samplesDone += 1
                }
                progress(RemuxProgress(bytesDone: bytesDone, bytesTotal: total, samplesDone: samplesDone,
                                       samplesTotal: copied.count))
            }
        }
        do {
            // The operations straight to the sink, whose type is known here: through the
            // writer's generic `finish`, each of a long track's 360,000 copies cost a
            // generic-metadata lookup (a third of the user time of the 10-hour benchmark).
            try output.writer.forEachOperation(.progressive) { operation, _ in
                if isCancelled() { throw RemuxError.cancelled }
                try target.perform(operation)
            }
        } catch {
            throw RemuxError(bridging: error)
        }
        try target.flush()
        return target.position
    }

    /// The metadata and chapters to carry over, checked: see ``OutputExtras/build(for:in:source:table:codec:)``.
    static func extras(of track: Track, in movie: Movie, source: some ByteSource, table: SampleTable,
                       codec: AudioCodec, name: String) throws -> OutputExtras {
        OutputExtras.build(for: track, in: movie, source: source, table: table, codec: codec)
    }

    /// How `track` is presented (``TrackPresentation``, the one rule, shared with probe): its
    /// edit list, or without one the file's `iTunSMPB` item where it applies
    /// (``GaplessInfo/init(for:in:)``, the one place that decides).
    static func presentation(of track: Track, in movie: Movie, table: SampleTable) -> TrackPresentation {
        TrackPresentation(of: track, in: movie, mediaDuration: table.totalDuration, mediaEnd: table.presentationEnd)
    }

    /// Priming, padding and the presented sample count of an AAC track, from an edit list
    /// that skips priming (one non-empty edit with media time > 0), when the media timescale
    /// counts samples.
    static func gaplessNumbers(track: Track, movie: Movie, table: SampleTable, codec: AudioCodec)
        -> (priming: UInt64, padding: UInt64, sampleCount: UInt64)?
    {
        let edits = track.editList?.entries.filter { !$0.isEmpty } ?? []
        guard codec.kind == .aac, edits.count == 1, let edit = edits.first, edit.mediaTime > 0,
              track.mediaHeader.timescale == UInt32(clamping: codec.sampleRate),
              let presented = rescale(edit.segmentDuration, from: movie.header.timescale,
                                      to: track.mediaHeader.timescale) else { return nil }
        let priming = UInt64(edit.mediaTime)  // > 0, checked above.
        let total = table.totalDuration
        let (end, overflow) = priming.addingReportingOverflow(presented)
        guard !overflow, end <= total else { return nil }
        return (priming, total - end, presented)  // end <= total, checked just above.
    }

    func result(outputPath: String, bytesWritten: UInt64) -> ExtractionResult {
        ExtractionResult(outputPath: outputPath, inputTrackID: track.trackID, codec: codec.codecString,
                         sampleRate: codec.sampleRate, channelCount: codec.channelCount,
                         sampleCount: output.samples.count,
                         duration: output.presentedSeconds,
                         bytesWritten: bytesWritten, salvage: salvage, notes: notes + cutNotes,
                         warnings: codec.warnings + presentationWarnings + output.warnings,
                         droppedTracks: droppedTracks)
    }

    // MARK: Track choice, shared with mux
    //
    // `select`, `checkSamplesAreInFile` and `sampleTable(of:in:source:salvage:name:)` are the
    // one way a recipe chooses an audio track and gets its checked samples (extraction, probe
    // and mux's clips use them): the same rules and the same messages everywhere.

    /// The audio track `choice` names (``TrackChoice``: the first audio track in file order,
    /// the N-th, or a track ID that must be audio), or ``RemuxError/Code/noAudioTrack`` with
    /// a message listing the file's tracks (`name` is how the input is called).
    ///
    /// The first audio track is the first intact one (issue 32: a damaged track is handled as
    /// if it were not there, by ``MovieReader/damage(of:)``): each damaged one before it is
    /// added to `dropped`. When every audio track is damaged, the last is chosen and its
    /// damage is the error. A track named by its number or ID is taken as it is.
    static func select(_ choice: TrackChoice, in movie: Movie, source: some ByteSource, name: String,
                       dropped: inout [RemuxResult.DroppedTrack]) throws -> Track {
        let audio = movie.tracks.filter(\.isAudio)
        let wanted: Int
        switch choice {
        case .firstAudio:
            let reader = MovieReader(movie: movie, source: source)
            for candidate in audio.dropLast() {
                guard let media = reader.track(id: candidate.trackID), let damage = reader.damage(of: media) else {
                    return candidate
                }
                dropped.append(RemuxResult.DroppedTrack(media, damage: damage))
            }
            wanted = audio.count - 1
        case .audioIndex(let n): wanted = n
        case .trackID(let id):
            guard let track = movie.tracks.first(where: { $0.trackID == id }) else {
                throw RemuxError(.noAudioTrack, "\(name) has no track with ID \(id) (it has \(describe(movie.tracks)))")
            }
            guard track.isAudio else {
                throw RemuxError(.noAudioTrack, "track \(id) of \(name) is not audio (it has \(describe(movie.tracks)))")
            }
            return track
        }
        guard wanted >= 0, wanted < audio.count else {
            let has = describe(movie.tracks)
            if audio.isEmpty {
                throw RemuxError(.noAudioTrack, "\(name) has no audio track (it has \(has))")
            }
            throw RemuxError(.noAudioTrack, "\(name) has no audio track \(wanted): it has \(audio.count) "
                             + "(numbered from 0; \(has))")
        }
        return audio[wanted]
    }

    /// The first 4 bytes of the first sample (an MPEG audio frame header), or none.
    static func firstPacketHeader(_ table: SampleTable, source: some ByteSource) -> [UInt8] {
        var chunks = table.makeChunkIterator()
        guard let chunk = chunks.next(), chunk.byteCount >= 4 else { return [] }
        return (try? source.bytes(at: chunk.offset, count: 4)) ?? []
    }

    /// "tracks 1 (vide), 2 (soun)" for messages.
    static func describe(_ tracks: [Track]) -> String {
        tracks.isEmpty ? "no tracks" : "tracks " + tracks.map { "\($0.trackID) (\($0.handlerType))" }
            .joined(separator: ", ")
    }

    /// Notes for the user about the chosen track: disabled, or one of an alternate group.
    var notes: [String] {
        var notes: [String] = []
        if !movie.tracks.contains(where: { $0.handlerType == .vide }) {
            notes.append("the input has no video track: it is already audio-only, and the output holds the same "
                         + "audio repackaged")
        }
        if !track.header.isEnabled {
            notes.append("track \(track.trackID) is marked disabled in the input; it was extracted as an enabled track")
        }
        let group = track.header.alternateGroup
        let alternates = movie.tracks.filter { $0.isAudio && $0.header.alternateGroup == group && group != 0 }
        if alternates.count > 1 {
            let ids = alternates.map { alternate in
                String(alternate.trackID) + (alternate.mediaHeader.languageCode.map { " (\($0))" } ?? "")
            }
            notes.append("track \(track.trackID) is one of \(alternates.count) alternative audio tracks (group \(group): "
                         + "IDs \(ids.joined(separator: ", "))); "
                         + "another can be chosen by its track ID")
        }
        return notes
    }

    /// Refuses tracks whose samples live in another file (a `dref` entry without the
    /// self-contained flag, ISO/IEC 14496-12 § 8.7.2).
    static func checkSamplesAreInFile(_ track: Track) throws {
        guard let references = track.dataReferences else { return }
        for description in track.sampleDescriptions.entries {
            guard let index = description.dataReferenceIndex.map(Int.init) else { continue }
            guard index >= 1, index <= references.entries.count else {
                throw RemuxError(.invalidInput, "\(description.path): data reference \(index) does not exist "
                                 + "(dref has \(references.entries.count))")
            }
            if !references.entries[index - 1].isSelfContained {
                throw RemuxError(.unsupportedInput, "\(track.path): the audio samples are stored in another file "
                                 + "(dref entry '\(references.entries[index - 1].type)'), not in this one")
            }
        }
    }

    /// The track's validated sample tables (``MovieReader/sampleTable(of:)``, the one track
    /// index): from `stbl`, or built from the movie fragments. A truncated input is an error
    /// unless `salvage` is set; then the complete part is kept
    /// (``MovieReader/wholeSampleTable(of:)``, the rule `probe --packets` lists by too).
    static func sampleTable(of track: Track, in movie: Movie, source: some ByteSource, salvage: Bool,
                            name: String) throws -> (SampleTable, SalvageReport?) {
        let reader = MovieReader(movie: movie, source: source)
        do {
            let tables = try parse { try reader.sampleTable(of: track) }
            guard let cut = tables.incompleteFragment else { return (tables.table, nil) }
            let table = tables.table
            let report = SalvageReport(fileLength: movie.fileLength, cutBoxOffset: cut.offset,
                                       recoveredSeconds: presentation(of: track, in: movie, table: table).seconds)
            guard salvage else {
                throw truncated(name, report, samples: table.sampleCount,
                                "the fragment at byte \(cut.offset) is incomplete; the \(cut.fragmentCount) "
                                + "complete fragments before it and the whole samples of that one hold")
            }
            return (table, report)
        } catch let error as RemuxError where error.parseError?.code == .invalidSampleTable && !movie.isFragmented {
            // Samples past the end of a file that ends inside a box: the file was cut short.
            guard let cut = movie.truncatedBox else { throw error }
            let table = try parse { try reader.wholeSampleTable(of: track) }
            let report = SalvageReport(fileLength: movie.fileLength, cutBoxOffset: cut.offset,
                                       recoveredSeconds: presentation(of: track, in: movie, table: table).seconds)
            guard salvage else {
                throw truncated(name, report, samples: table.sampleCount,
                                "the \(cut.type) box at byte \(cut.offset) should run to byte "
                                + "\(cut.offset &+ cut.size); the samples before the cut hold")
            }
            return (table, report)
        }
    }

    /// The error of a truncated input; it offers salvaging only when whole samples precede
    /// the cut (`samples` of them).
    static func truncated(_ name: String, _ report: SalvageReport, samples: Int, _ detail: String) -> RemuxError {
        guard samples > 0 else {
            return RemuxError(.truncatedInput, "\(name) is truncated: it ends at byte \(report.fileLength); \(detail) "
                              + "no whole audio sample, so nothing can be salvaged")
        }
        return RemuxError(.truncatedInput, "\(name) is truncated: it ends at byte \(report.fileLength); \(detail) "
                          + "\(formatSeconds(report.recoveredSeconds)) s of audio, which salvaging can extract",
                          salvageable: report)
    }

    /// The output's media duration: the input's `mdhd` duration, or the samples' total when
    /// the samples came from fragments (whose `mdhd` says 0) or were salvaged.
    /// Never more than the samples hold: an `mdhd` claiming hours over a few samples would
    /// otherwise be written (and reported) as the output's duration.
    static func mediaDuration(of track: Track, table: SampleTable, movie: Movie, salvage: SalvageReport?) -> UInt64 {
        movie.isFragmented || salvage != nil ? table.totalDuration : min(track.mediaHeader.duration, table.totalDuration)
    }

    /// Refuses a track without samples: its output would be an empty file that looks fine.
    /// A file cut short before its first sample is called truncated.
    static func checkHasSamples(_ table: SampleTable, of track: Track, in movie: Movie, name: String) throws {
        guard table.sampleCount == 0 else { return }
        if let cut = movie.truncatedBox {
            throw RemuxError(.truncatedInput, "\(name) is truncated: it ends at byte \(movie.fileLength), inside the "
                             + "\(cut.type) box at byte \(cut.offset), and audio track \(track.trackID) has no samples "
                             + "before the cut")
        }
        let fragments = movie.isFragmented && movie.fragmentRanges.isEmpty ? " (the file has no movie fragments)" : ""
        throw RemuxError(.invalidInput, "audio track \(track.trackID) of \(name) has no samples\(fragments)")
    }

}

/// Runs a parsing step, turning parser errors into ``RemuxError``s.
func parse<T>(_ body: () throws -> T) throws(RemuxError) -> T {
    try bridged(body)
}

/// Seconds with three decimals (``MediaTime/text(seconds:decimals:)``).
func formatSeconds(_ value: Double) -> String {
    MediaTime.text(seconds: value)
}
