import ISOBMFF

/// A text chapter track as the output carries it: its description, its edit list (in the
/// input's movie timescale) and its samples with their durations.
struct OutputChapterTrack {
    var description: TrackDescription
    var edits: EditListBox?
    var samples: [[UInt8]]
    var durations: [UInt32]
}

/// What an extraction carries beyond the audio: metadata and a chapter track.
struct OutputExtras {
    /// `moov/udta` (iTunes items, QuickTime items, Nero chapters), header included.
    var userData: [UInt8]?
    /// `moov/meta` (keys-based metadata), header included.
    var metadata: [UInt8]?
    /// The audio track's `trak/udta` and `mdia/elng`.
    var trackUserData: [UInt8]?
    var extendedLanguage: [UInt8]?
    /// A QuickTime chapter track (text), referenced from the audio by `tref/chap`, rebuilt
    /// from its chapters, its samples held in memory (bounded by
    /// ``Limits/maximumChapterCount`` and ``Limits/maximumChapterSampleSize``).
    var chapterTrack: OutputChapterTrack?
    /// Chapters that replace the input's (``TagChanges/chapters``): written in both forms by
    /// ``MovieWriter/addChapters(_:)`` once the audio is laid out.
    var newChapters: [Chapter]?
    /// What was dropped or repaired on the way (a box nested too deep, a chapter reference
    /// to a video track), one message each, for the user.
    var warnings: [String] = []
}

extension OutputExtras {
    /// The metadata and chapters to carry over, checked so that the output stays readable
    /// (``CopiedBoxSanitizer``): `moov/udta` (with an `iTunSMPB` item added when the edit
    /// list shows priming and the input has none), keys-based `moov/meta`, the track's
    /// `udta` and `mdia/elng`, and the text chapter track the audio refers to, rebuilt.
    static func build(for track: Track, in movie: Movie, source: some ByteSource, table: SampleTable,
                      codec: AudioCodec) -> OutputExtras {
        var extras = OutputExtras()
        func checked(_ box: [UInt8]?, depth: Int, parent: String) -> [UInt8]? {
            guard let box else { return nil }
            let result = CopiedBoxSanitizer.sanitize(box, depth: depth, parentPath: parent)
            extras.warnings += result.warnings
            return result.bytes
        }
        // Depths count moov as 1 (see Limits.maximumCopiedDepth).
        extras.userData = checked(movie.userData, depth: 2, parent: "moov")
        extras.metadata = checked(movie.metadata, depth: 2, parent: "moov")
        extras.trackUserData = checked(track.userData, depth: 3, parent: track.path)
        extras.extendedLanguage = checked(track.extendedLanguage, depth: 4, parent: track.path + "/mdia")
        let hasGaplessItem = Metadata.hasGaplessItem(extras.userData)
        if !hasGaplessItem,
           let gapless = Extraction.gaplessNumbers(track: track, movie: movie, table: table, codec: codec)
        {
            extras.userData = Metadata.userData(extras.userData, settingGapless: gapless.priming,
                                                padding: gapless.padding, sampleCount: gapless.sampleCount)
        }
        extras.addChapterTrack(for: track, in: movie, source: source)
        return extras
    }

    /// The first text track that `track`'s `tref/chap` names, rebuilt from its samples as
    /// track 2 (one sample description, no sample groups). References to anything but a
    /// text track (a video track, the audio itself) are not followed, with a warning.
    mutating func addChapterTrack(for track: Track, in movie: Movie, source: some ByteSource) {
        for id in track.chapterReferences {
            guard let chapters = movie.tracks.first(where: { $0.trackID == id }) else { continue }
            guard chapters.isTextTrack else {
                warnings.append("\(track.path)/tref/chap names track \(id) (\(chapters.handlerType)), which is not a "
                                + "text chapter track: it was not copied")
                continue
            }
            let read: Chapters.TrackSamples?
            do {
                read = try Chapters.samples(of: chapters, movie: movie, source: source)
            } catch {
                warnings.append("the chapter track was not copied: \(error)")
                return
            }
            guard let read else { return }
            // Checked as every copied track is (CopiedTrack); one sample description, no
            // udta, elng or sample groups.
            var description = CopiedTrack.description(of: chapters, quickTimeLayout: movie.usesQuickTimeLayout,
                                                       notes: &warnings)
            description.flags = chapters.header.flags
            description.creationTime = chapters.header.creationTime
            description.modificationTime = chapters.header.modificationTime
            description.mediaCreationTime = chapters.mediaHeader.creationTime
            description.mediaModificationTime = chapters.mediaHeader.modificationTime
            description.mediaDuration = max(chapters.mediaHeader.duration, read.table.totalDuration)
            description.userData = nil
            description.extendedLanguage = nil
            description.sampleEntries = Array(description.sampleEntries.prefix(1))
            chapterTrack = OutputChapterTrack(description: description, edits: chapters.editList, samples: read.samples,
                                        durations: read.durations)
            return
        }
    }
}

/// An audio cut of the extracted track (issue 14), planned over the input's own samples:
/// ``CutPlan`` says which to copy (the range and the decoder's pre-roll) and the edits that
/// present exactly `[from, to)`; ``ExtractedMovie`` copies them as it copies a whole track.
struct AudioCutPlan {
    /// The input track's samples (``MovieReader/sampleTable(of:)``'s table, indexed).
    var samples: SampleIndex
    var plan: CutPlan
    /// The output's movie timescale, in which the plan's segment durations count.
    var movieTimescale: UInt32
    /// Whether the output gets an `iTunSMPB` item for the cut (the whole extraction has one).
    var setsGaplessItem: Bool
    /// The copy counted in its sample rate where the track's timescale is another
    /// (``SampleRateTimescale``); nil to keep the track's.
    var retimed: SampleRateTimescale?
}

/// The output of an extraction, planned as a ``MovieWriter`` holds it: `ftyp`, a `moov`
/// with the audio track (ID 1) and the chapter track (ID 2) when there is one, then the
/// samples. The writer builds every table and lays the file out (`moov` first, `stco` or
/// `co64` as the offsets need); this says what goes in.
struct ExtractedMovie {
    var writer: MovieWriter
    /// The output's presented duration in seconds (its edit list's).
    var presentedSeconds: Double
    /// The input samples copied, in decode order: all of the table's, or a cut's.
    var samples: Range<Int>
    /// What was dropped or repaired to keep the output readable: the extras' warnings and
    /// the sample entries' (``AudioSampleEntry/sanitized(_:quickTimeLayout:path:)``).
    var warnings: [String]

    /// The brands for an output holding `codec`: `M4A ` for the codecs Apple's M4A
    /// carries (AAC, ALAC, AC-3, E-AC-3); plain ISO brands for the others, with `Opus` for
    /// Opus as its ISOBMFF mapping asks.
    static func fileType(for codec: AudioCodec.Kind) -> FileTypeBox {
        switch codec {
        case .aac, .alac, .ac3, .eac3:
            FileTypeBox(majorBrand: .m4a, minorVersion: 0x200, compatibleBrands: [.m4a, .mp42, .isom])
        case .opus:
            FileTypeBox(majorBrand: .isom, minorVersion: 0x200, compatibleBrands: [.isom, "iso2", .mp42, "Opus"])
        case .mp3, .mp2, .flac:
            FileTypeBox(majorBrand: .isom, minorVersion: 0x200, compatibleBrands: [.isom, "iso2", .mp42])
        }
    }

    /// - Parameters:
    ///   - samples: the samples to copy (all of `track`'s, or the salvaged ones), read from
    ///     source 0 of the sink.
    ///   - entries: the output's sample entries; `entryIndex` maps an input `stsd` index
    ///     (1-based) to its 1-based index among them.
    ///   - codec: decides the brands, and for AAC the roll-recovery group (-1) written when
    ///     the input has none, as FFmpeg does.
    ///   - mediaDuration: the `mdhd` duration to write. `track`'s edit list is the one the
    ///     presentation rule (``TrackPresentation``) fitted to the media, written as it is.
    ///   - movieTimescale: the timescale `track`'s edit list counts in, when not the input
    ///     movie's (an edit made from `iTunSMPB` counts samples).
    ///   - cut: an audio cut (``AudioCutPlan``): only its samples are copied, its edits
    ///     replace the track's, and the whole input's chapters are left out.
    init(movie: Movie, track: Track, table: SampleTable, entries: [[UInt8]], entryIndex: [UInt32: UInt32],
         codec: AudioCodec.Kind, mediaDuration: UInt64, movieTimescale outputTimescale: UInt32? = nil,
         extras: OutputExtras = OutputExtras(), cut: AudioCutPlan? = nil) throws {
        var warnings = extras.warnings
        let entries = entries.map { entry in
            let result = AudioSampleEntry.sanitized(entry, quickTimeLayout: false,
                                                    path: track.path + "/mdia/minf/stbl/stsd")
            warnings += result.warnings
            return result.bytes ?? entry
        }
        self.warnings = warnings
        let media = track.mediaHeader
        // With an edit list, the input's movie timescale is kept, so the edits stay exact.
        // Without one, the output gets the edit list FFmpeg writes: all of the media from
        // time 0, in milliseconds, rounded up.
        // A cut's edits count in the timescale its plan chose (``AudioCutPlan``).
        let movieTimescale = cut?.movieTimescale
            ?? Self.movieTimescale(of: track, in: movie, gaplessTimescale: outputTimescale)
        guard movieTimescale > 0, media.timescale > 0 else {
            throw RemuxError(.invalidInput, "\(track.path): the movie or media timescale is 0")
        }
        let editList = cut.map { EditListBox(entries: $0.retimed?.edits($0.plan.edits) ?? $0.plan.edits) }
            ?? track.editList.flatMap { $0.entries.isEmpty ? nil : $0 }
            ?? EditListBox(entries: [
                .init(segmentDuration: rescaleRoundingUp(mediaDuration, from: media.timescale, to: movieTimescale) ?? 0,
                      mediaTime: 0),
            ])
        let trackDuration = editList.entries.totalDuration
        if trackDuration == UInt64.max {
            throw RemuxError(.invalidInput, "\(track.path): the track's duration does not fit in 64 bits")
        }
        presentedSeconds = cut.map { MediaTime.seconds($0.plan.presentedTicks, timescale: media.timescale) }
            ?? Double(trackDuration) / Double(movieTimescale)
        samples = cut?.plan.samples ?? 0..<table.sampleCount

        writer = MovieWriter(movieTimescale: movieTimescale)
        writer.fileType = Self.fileType(for: codec)
        writer.creationTime = movie.header.creationTime
        writer.modificationTime = movie.header.modificationTime
        writer.userData = extras.userData
        writer.metadata = extras.metadata
        if cut != nil {
            // Nero chapters and iTunSMPB describe the whole input: the cut gets its own iTunSMPB
            // (below) where the whole extraction has one, and no chapters.
            if let userData = writer.userData {
                writer.userData = Metadata.userData(removingGaplessFrom: Gapless.removing(["chpl"], from: userData))
            }
        } else {
            // One chunk holds at most a MiB, whatever its duration: the output is read in order.
            writer.chunkSeconds = .infinity
        }

        var audio = TrackDescription(handler: HandlerBox(handlerType: .soun, name: "SoundHandler"),
                                     timescale: cut?.retimed?.rate ?? media.timescale, language: media.language,
                                     sampleEntries: entries,
                                     mediaInformationHeader: SoundMediaHeaderBox(
                                         balance: track.soundMediaHeader?.balance ?? 0).serialized)
        audio.userData = extras.trackUserData
        audio.extendedLanguage = extras.extendedLanguage
        audio.flags = track.header.flags | TrackHeaderBox.enabledFlag | TrackHeaderBox.inMovieFlag
        audio.matrix = track.header.matrix == MovieHeaderBox.identityMatrix ? nil : track.header.matrix
        audio.alternateGroup = track.header.alternateGroup
        audio.volume = track.header.volume
        audio.creationTime = track.header.creationTime
        audio.modificationTime = track.header.modificationTime
        audio.mediaCreationTime = media.creationTime
        audio.mediaModificationTime = media.modificationTime
        // A cut's media lasts what its samples last (the writer sums them).
        audio.mediaDuration = cut == nil ? mediaDuration : nil
        let chapterTrack = cut == nil ? extras.chapterTrack : nil
        if chapterTrack != nil { audio.references["chap"] = [2] }

        var (groupDescriptions, sampleToGroups) = Self.sampleGroups(of: table, codec: codec)
        if let cut { sampleToGroups = CutPlan.slice(sampleToGroups, to: cut.plan.samples) }
        try parse {
            let id = try writer.addTrack(audio)
            if let cut {
                let ticks = try Self.append(cut, to: id, of: &writer) { entryIndex[$0] ?? 1 }
                if cut.setsGaplessItem {
                    // iTunSMPB as the cut's edit list says it: priming = its media time, the
                    // valid samples = the range, the padding = what follows.
                    let priming = editList.entries.first { !$0.isEmpty }.map { UInt64(clamping: $0.mediaTime) } ?? 0
                    let presented = cut.retimed.flatMap { rescale(cut.plan.presentedTicks, from: $0.timescale, to: $0.rate) }
                        ?? cut.plan.presentedTicks
                    let (used, overflow) = priming.addingReportingOverflow(presented)
                    writer.userData = Metadata.userData(writer.userData, settingGapless: priming,
                                                        padding: !overflow && used <= ticks ? ticks - used : 0,
                                                        sampleCount: presented)
                }
            } else {
                try writer.append(contentsOf: table, from: 0, to: id) { entryIndex[$0] ?? 1 }
            }
            try writer.setEdits(editList.entries, for: id)
            try writer.setSampleGroups(groupDescriptions, assignments: sampleToGroups, for: id)
            if let chapters = chapterTrack {
                let chapterID = try writer.addTrack(chapters.description)
                for (sample, duration) in zip(chapters.samples, chapters.durations) {
                    try writer.append(sample, duration: duration, to: chapterID)
                }
                let edits = chapters.edits.flatMap { Self.rescaled($0, from: movie.header.timescale, to: movieTimescale) }
                try writer.setEdits(edits, for: chapterID)
            }
        }
        if let list = extras.newChapters {
            let written = try Self.addChapters(list, to: &writer)
            if let warning = ChapterTrack.neroLimitWarning(count: written.chapters.count) {
                self.warnings.append(warning)
            }
        }
    }

    /// The movie timescale of a whole extraction's output: with an edit list, the input's
    /// (or `gaplessTimescale`, the media's, for an edit made from `iTunSMPB`), so that the
    /// edits stay exact; without one, milliseconds, as FFmpeg writes it.
    static func movieTimescale(of track: Track, in movie: Movie, gaplessTimescale: UInt32?) -> UInt32 {
        track.editList.map { !$0.entries.isEmpty } == true ? gaplessTimescale ?? movie.header.timescale : 1000
    }

    /// The input's sample groups, with for AAC the roll-recovery group (-1) FFmpeg writes
    /// when the input has none, over every sample of `table`.
    static func sampleGroups(of table: SampleTable, codec: AudioCodec.Kind)
        -> (descriptions: [SampleGroupDescriptionBox], assignments: [SampleToGroupBox]) {
        var groupDescriptions = table.boxes.sampleGroupDescriptions
        var sampleToGroups = table.boxes.sampleToGroups
        if codec == .aac && !groupDescriptions.contains(where: { $0.groupingType == .roll }) {
            groupDescriptions.append(.aacRoll)
            sampleToGroups.append(SampleToGroupBox(groupingType: .roll, entries: [
                .init(sampleCount: UInt32(table.sampleCount), groupDescriptionIndex: 1),
            ]))
        }
        return (groupDescriptions, sampleToGroups)
    }

    /// Appends the samples of `cut` to `track`, each sample entry renumbered by `entry`, and
    /// returns the media ticks they last. The pre-roll (the samples after the first, up to
    /// the one presenting the cut's start) is written as non-sync samples: a player that
    /// starts at the sync sample at or before the edit's start (GStreamer's qtdemux) then
    /// decodes the pre-roll rather than starting cold at the presented packet.
    static func append(_ cut: AudioCutPlan, to track: UInt32, of writer: inout MovieWriter,
                       entry: (UInt32) -> UInt32) throws -> UInt64 {
        let range = cut.plan.samples
        let preRoll = cut.plan.firstPresented > range.lowerBound
            ? (range.lowerBound + 1)..<(cut.plan.firstPresented + 1) : 0..<0
        var iterator = cut.samples.makeIterator(from: range.lowerBound)
        var position = range.lowerBound
        var ticks: UInt64 = 0
        while position < range.upperBound, var sample = iterator.next() {
            if preRoll.contains(position) { sample.isSync = false }
            if let retimed = cut.retimed { sample.duration = retimed.durations[position - range.lowerBound] }
            sample.descriptionIndex = entry(sample.descriptionIndex)
            try writer.append(sample, from: 0, to: track)
            ticks &+= UInt64(sample.duration)  // A checked table's total fits in 64 bits.
            position += 1
        }
        return ticks
    }

    /// ``MovieWriter/addChapters(_:)``, its refusals (too many chapters, one after the end)
    /// said as the caller's mistake they are.
    static func addChapters(_ chapters: [Chapter], to writer: inout MovieWriter) throws -> ChapterTrack {
        do {
            return try writer.addChapters(chapters)
        } catch let error as ISOBMFFError {
            throw RemuxError(.invalidArgument, "the chapter list: \(error.message)")
        }
    }

    /// `edits` in another movie timescale, or nil (the track presented whole) when their
    /// durations do not fit 64 bits, in all or once rescaled, or sum to nothing.
    static func rescaled(_ edits: EditListBox, from old: UInt32, to new: UInt32) -> [EditListBox.Entry]? {
        guard let entries = edits.entries.rescaled(from: old, to: new), entries.totalDuration > 0 else { return nil }
        return entries
    }
}
