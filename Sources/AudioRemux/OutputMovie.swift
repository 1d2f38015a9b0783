import ISOBMFF

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
    /// from its chapters: its samples are ``chapterSamples``, held in memory (bounded by
    /// ``Limits/maximumChapterCount`` and ``Limits/maximumChapterSampleSize``).
    var chapterTrack: TrackPlan?
    /// The chapter track's samples, one after the other, written after the audio.
    var chapterSamples: [UInt8] = []
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
        let hasGaplessItem = extras.userData.map { Metadata.freeformNames(in: $0).contains("iTunSMPB") } ?? false
        if !hasGaplessItem,
           let gapless = Extraction.gaplessNumbers(track: track, movie: movie, table: table, codec: codec)
        {
            extras.userData = Metadata.userData(extras.userData, adding: Metadata.gaplessItem(
                priming: gapless.priming, padding: gapless.padding, sampleCount: gapless.sampleCount))
        }
        extras.addChapterTrack(for: track, in: movie, source: source)
        return extras
    }

    /// The first text track that `track`'s `tref/chap` names, rebuilt from its samples as
    /// track 2 (one sample description, no sample groups). References to anything but a
    /// text track (a video track, the audio itself) are not followed, with a warning.
    mutating func addChapterTrack(for track: Track, in movie: Movie, source: some ByteSource) {
        for id in track.references["chap"] ?? [] {
            guard id != track.trackID, let chapters = movie.tracks.first(where: { $0.trackID == id }) else { continue }
            guard Chapters.isTextTrack(chapters) else {
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
            var plan = TrackPlan(copying: chapters, table: read.table, source: 0)
            plan.header.trackID = 2
            plan.sampleDescriptions.entries = Array(plan.sampleDescriptions.entries.prefix(1))
            if var entry = plan.sampleDescriptions.entries.first, let fields = entry.textFieldsSize {
                let result = CopiedBoxSanitizer.sanitizeEntry(entry.bytes, fieldsSize: fields,
                                                              depth: Limits.sampleEntryDepth,
                                                              path: chapters.path + "/mdia/minf/stbl/stsd")
                warnings += result.warnings
                entry.bytes = result.bytes ?? entry.bytes
                plan.sampleDescriptions.entries = [entry]
            }
            plan.descriptionIndexes = plan.descriptionIndexes.map { _ in 1 }
            plan.groups = []
            plan.sampleToGroups = []
            plan.sizes = read.samples.map { UInt32($0.count) }  // Each at most maximumChapterSampleSize.
            plan.offsets = plan.offsets.map { _ in 0 }
            let header = CopiedBoxSanitizer.sanitize(plan.mediaInformationHeader, depth: 5,
                                                     parentPath: chapters.path + "/mdia/minf")
            warnings += header.warnings
            plan.mediaInformationHeader = header.bytes ?? NullMediaHeader.bytes
            chapterTrack = plan
            chapterSamples = read.samples.flatMap { $0 }
            return
        }
    }
}

/// `nmhd` (ISO/IEC 14496-12 § 8.4.5.5), for a track whose own media header was dropped.
enum NullMediaHeader {
    static var bytes: [UInt8] {
        var w = BoxWriter()
        w.fullBox("nmhd", version: 0, flags: 0) { _ in }
        return w.bytes
    }
}

/// The planned output file: `ftyp`, then `moov` (faststart: always before the media data),
/// then the header of the `mdat` whose payload is the samples, copied in order.
///
/// The layout is computed before anything is written: the sample tables are rebuilt for
/// the output's own chunks, and `moov` is sized first so the chunk offsets can point past it
/// (with `co64` only when an offset needs more than 32 bits).
struct OutputMovie {
    var fileType: [UInt8]
    var movieBox: [UInt8]
    var mediaDataHeader: [UInt8]
    var payloadSize: UInt64
    /// What was dropped or repaired to keep the output readable: the extras' warnings and
    /// the sample entries' (``CopiedBoxSanitizer``).
    var warnings: [String] = []

    /// Output chunks hold at most this many bytes of samples.
    static let chunkByteLimit: UInt64 = 1 << 20

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
    ///   - entries: the output's sample entries; `entryIndex` maps an input `stsd` index
    ///     (1-based) to its 1-based index among them.
    ///   - codec: decides the brands, and for AAC the roll-recovery group (-1) written when
    ///     the input has none, as FFmpeg does.
    /// The media duration written in `mdhd`.
    var mediaDuration: UInt64
    /// The output's presented duration in seconds (its edit list's).
    var presentedSeconds: Double

    ///   - movieTimescale: the timescale `track`'s edit list counts in, when not the input
    ///     movie's (an edit made from `iTunSMPB` counts samples).
    ///   - mediaDuration: the `mdhd` duration to write. When it differs from the input's
    ///     (fragmented or salvaged input), edits of duration 0 or running past the media
    ///     are fitted to it.
    init(movie: Movie, track: Track, table: SampleTable, entries: [[UInt8]], entryIndex: [UInt32: UInt32],
         codec: AudioCodec.Kind, mediaDuration: UInt64, movieTimescale outputTimescale: UInt32? = nil,
         extras: OutputExtras = OutputExtras()) throws {
        let addAACRoll = codec == .aac
        var warnings = extras.warnings
        let entries = entries.map { entry in
            let result = AudioSampleEntry.sanitized(entry, quickTimeLayout: false,
                                                    path: track.path + "/mdia/minf/stbl/stsd")
            warnings += result.warnings
            return result.bytes ?? entry
        }
        self.warnings = warnings
        // Output chunks: consecutive samples up to chunkByteLimit, split where the entry changes.
        var chunkSamples: [(count: UInt32, entry: UInt32)] = []
        var chunkStarts: [UInt64] = []
        var position: UInt64 = 0
        var chunkBytes: UInt64 = 0
        let sizes = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            let entry = entryIndex[chunk.sampleDescriptionIndex] ?? 1
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = UInt64(sizes.size(ofSample: sample))
                if let last = chunkSamples.last, last.entry == entry, chunkBytes + size <= Self.chunkByteLimit
                    || chunkBytes == 0
                {
                    chunkSamples[chunkSamples.count - 1].count += 1
                    chunkBytes += size
                } else {
                    chunkSamples.append((1, entry))
                    chunkStarts.append(position)
                    chunkBytes = size
                }
                position += size
            }
            return true
        }
        var runs: [SampleToChunkBox.Entry] = []
        for (i, chunk) in chunkSamples.enumerated() {
            if let last = runs.last, last.samplesPerChunk == chunk.count, last.sampleDescriptionIndex == chunk.entry {
                continue
            }
            runs.append(.init(firstChunk: UInt32(i + 1), samplesPerChunk: chunk.count,
                              sampleDescriptionIndex: chunk.entry))
        }

        var media = track.mediaHeader
        // With an edit list, the input's movie timescale is kept, so the edits stay exact.
        // Without one, the output gets the edit list FFmpeg writes: all of the media from
        // time 0, in milliseconds, rounded up.
        let inputEdits = track.editList.flatMap { $0.entries.isEmpty ? nil : $0 }
        let movieTimescale = inputEdits != nil ? outputTimescale ?? movie.header.timescale : 1000
        guard movieTimescale > 0, media.timescale > 0 else {
            throw RemuxError(.invalidInput, "\(track.path): the movie or media timescale is 0")
        }
        var editList = inputEdits ?? EditListBox(entries: [
            .init(segmentDuration: rescaleRoundingUp(mediaDuration, from: media.timescale, to: movieTimescale) ?? 0,
                  mediaTime: 0),
        ])
        if mediaDuration != media.duration, inputEdits != nil {
            var edits = editList
            for i in edits.entries.indices where !edits.entries[i].isEmpty {
                let start = UInt64(clamping: edits.entries[i].mediaTime)
                let available = rescale(mediaDuration > start ? mediaDuration - start : 0, from: media.timescale,
                                        to: movieTimescale) ?? UInt64.max
                if edits.entries[i].segmentDuration == 0 || edits.entries[i].segmentDuration > available {
                    edits.entries[i].segmentDuration = available
                }
            }
            editList = edits
        }
        media.duration = mediaDuration
        self.mediaDuration = mediaDuration
        let trackDuration = editList.entries.reduce(UInt64(0)) { total, entry in
            let (sum, overflow) = total.addingReportingOverflow(entry.segmentDuration)
            return overflow ? UInt64.max : sum
        }
        if trackDuration == UInt64.max {
            throw RemuxError(.invalidInput, "\(track.path): the track's duration does not fit in 64 bits")
        }

        presentedSeconds = Double(trackDuration) / Double(movieTimescale)
        var movieHeader = movie.header
        movieHeader.timescale = movieTimescale
        movieHeader.duration = trackDuration
        movieHeader.nextTrackID = extras.chapterTrack == nil ? 2 : 3
        var trackHeader = track.header
        trackHeader.trackID = 1
        trackHeader.duration = trackDuration
        trackHeader.flags |= TrackHeaderBox.enabledFlag | TrackHeaderBox.inMovieFlag
        trackHeader.width = 0
        trackHeader.height = 0

        var groupDescriptions = table.boxes.sampleGroupDescriptions
        var sampleToGroups = table.boxes.sampleToGroups
        if addAACRoll && !groupDescriptions.contains(where: { $0.groupingType == .roll }) {
            groupDescriptions.append(.aacRoll)
            sampleToGroups.append(SampleToGroupBox(groupingType: .roll, entries: [
                .init(sampleCount: UInt32(table.sampleCount), groupDescriptionIndex: 1),
            ]))
        }

        func buildMovieBox(firstChunkOffset: UInt64) -> [UInt8] {
            var w = BoxWriter(capacity: 4096 + table.sampleCount * 4 + chunkStarts.count * 8)
            w.box(.moov) { moov in
                movieHeader.write(to: &moov)
                moov.box(.trak) { trak in
                    trackHeader.write(to: &trak)
                    if extras.chapterTrack != nil {
                        trak.box("tref") { tref in tref.box("chap") { $0.write(UInt32(2)) } }
                    }
                    trak.box(.edts) { edts in editList.write(to: &edts) }
                    trak.box(.mdia) { mdia in
                        media.write(to: &mdia)
                        HandlerBox(handlerType: .soun, name: "SoundHandler").write(to: &mdia)
                        if let elng = extras.extendedLanguage { mdia.write(bytes: elng) }
                        mdia.box(.minf) { minf in
                            SoundMediaHeaderBox(balance: track.soundMediaHeader?.balance ?? 0).write(to: &minf)
                            minf.box(.dinf) { dinf in DataReferenceBox.selfContained.write(to: &dinf) }
                            minf.box(.stbl) { stbl in
                                SampleDescriptionBox(entries: entries.map { .init(format: .mp4a, bytes: $0) })
                                    .write(to: &stbl)
                                table.boxes.timeToSample.write(to: &stbl)
                                table.boxes.compositionOffsets?.write(to: &stbl)
                                table.boxes.syncSamples?.write(to: &stbl)
                                SampleToChunkBox(entries: runs).write(to: &stbl)
                                sizes.write(to: &stbl)
                                ChunkOffsetBox(offsets: chunkStarts.map { $0 + firstChunkOffset }).write(to: &stbl)
                                for box in groupDescriptions { box.write(to: &stbl) }
                                for box in sampleToGroups { box.write(to: &stbl) }
                            }
                        }
                    }
                    if let udta = extras.trackUserData { trak.write(bytes: udta) }
                }
                if var chapters = extras.chapterTrack {
                    // One chunk, after the audio.
                    chapters.retime(from: movie.header.timescale, to: movieTimescale)
                    Self.writeCopiedTrack(chapters, chunkOffset: firstChunkOffset + table.totalSampleBytes, to: &moov)
                }
                if let udta = extras.userData { moov.write(bytes: udta) }
                if let meta = extras.metadata { moov.write(bytes: meta) }
            }
            return w.bytes
        }

        fileType = Self.fileType(for: codec).serialized
        payloadSize = table.totalSampleBytes + UInt64(extras.chapterSamples.count)
        mediaDataHeader = MediaDataHeader.bytes(payloadSize: payloadSize)
        // The moov size depends on stco versus co64, which depends on the offsets, which
        // depend on the moov size: iterate until the size is stable (at most twice more).
        // Only one moov is alive at a time: a 10-hour track's takes megabytes.
        var size = buildMovieBox(firstChunkOffset: 0).count
        var box: [UInt8] = []
        while true {
            box = []
            box = buildMovieBox(firstChunkOffset: UInt64(fileType.count + size + mediaDataHeader.count))
            if box.count == size { break }
            size = box.count
        }
        movieBox = box
    }

    /// A track copied whole (tables as they are), its samples in one chunk at `chunkOffset`.
    static func writeCopiedTrack(_ track: TrackPlan, chunkOffset: UInt64, to moov: inout BoxWriter) {
        let count = UInt32(track.sampleCount)
        track.write(runs: count == 0 ? [] : [.init(firstChunk: 1, samplesPerChunk: count, sampleDescriptionIndex: 1)],
                    chunkOffsets: count == 0 ? [] : [chunkOffset], to: &moov)
    }
}
