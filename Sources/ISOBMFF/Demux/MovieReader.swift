/// Reads any MP4 or QuickTime file sample by sample: a regular file (`moov` first or
/// last), a fragmented one (`moof`/`trun`, any number of fragments; `sidx`, `styp` and
/// other top-level boxes are skipped) or a QuickTime movie.
///
/// Opening reads the box headers and `moov` only; a track's sample tables are checked
/// and indexed when ``samples(of:)`` is called, so only the tracks a caller chooses cost
/// memory (their compressed tables, see ``SampleIndex``).
///
/// ```swift
/// let reader = try MovieReader(reading: source)
/// for track in reader.tracks where track.kind == .audio {
///     let samples = try reader.samples(of: track)
///     var buffer: [UInt8] = []
///     for sample in samples { try reader.read(sample, into: &buffer) }
/// }
/// ```
public struct MovieReader<Source: ByteSource> {
    /// The source read.
    public let source: Source
    /// The parsed movie: brands, `mvhd`, the raw `trak` boxes, metadata, layout.
    public let movie: Movie
    /// The tracks in file order.
    public let tracks: [MediaTrack]

    /// What was wrong with the file but tolerated, as FFmpeg tolerates it (``Movie/warnings``):
    /// a second `moov` box, ignored (the first is read).
    public var warnings: [ISOBMFFError] { movie.warnings }

    /// Opens `source`: reads its top-level boxes and parses `moov`.
    ///
    /// - Throws: an ``ISOBMFFError`` when the file is not a movie or its `moov` is broken.
    ///   One damaged track does not hide the others: a track whose `stsd` is missing or
    ///   unreadable is listed with its ``MediaTrack/problem``, and one whose sample tables
    ///   are broken fails in ``samples(of:)``, for that track only.
    public init(reading source: Source) throws {
        self.source = source
        let movie = try Movie(reading: source)
        self.movie = movie
        tracks = movie.tracks.map { MediaTrack(track: $0, movie: movie) }
    }

    /// Reads `source` through a `movie` already parsed from it (``Movie/init(reading:)``),
    /// without parsing `moov` again: for a caller that needs the box layer first (tags,
    /// chapters) and the samples after.
    public init(movie: Movie, source: Source) {
        self.source = source
        self.movie = movie
        tracks = movie.tracks.map { MediaTrack(track: $0, movie: movie) }
    }

    /// The track with `id` (`tkhd` track ID), if any.
    public func track(id: UInt32) -> MediaTrack? {
        tracks.first { $0.id == id }
    }

    /// The samples of `track`, from its `stbl` or, in a fragmented file, from `moov` and
    /// every `moof` in file order. Checks the tables as a whole (``SampleTable``) and
    /// indexes them; costs O(table entries) time once, and the memory of the compressed
    /// tables. Keep the result rather than calling again.
    ///
    /// - Throws: the track's ``MediaTrack/problem``; `.invalidSampleTable` and the other
    ///   ``ISOBMFFError`` codes when the tables contradict one another or point outside the
    ///   file; `.endOfFile` for a fragmented file cut inside a fragment (for a file cut
    ///   short, ``wholeSamples(of:)`` reads the samples before the cut).
    public func samples(of track: MediaTrack) throws -> SampleIndex {
        if let problem = track.problem { throw problem }
        let tables = try sampleTable(of: track.track)
        if let cut = fragmentCut(tables, of: track) { throw cut }
        return try SampleIndex(table: tables.table, firstDecodeTime: tables.firstDecodeTime)
    }

    /// Why `track` cannot be copied although the rest of the file can (issue 32: one damaged
    /// track never sinks the others): its ``MediaTrack/problem`` (no readable sample
    /// description), or tables that contradict one another or point outside the file or into
    /// `moov`. Nil for an intact track, and for a track of a file cut short, whose damage is
    /// the file's (``wholeSamples(of:)``). Costs what ``samples(of:)`` costs.
    public func damage(of track: MediaTrack) -> ISOBMFFError? {
        inspection(of: track).damage
    }

    /// ``damage(of:)`` and the samples it built to find it (``samples(of:)``), so that a
    /// caller that goes on to copy an intact track does not build its index twice: `samples`
    /// where they read, nil where `damage` says why or the file is cut short (then
    /// ``samples(of:)`` throws what it threw). Costs what ``samples(of:)`` costs.
    public func inspection(of track: MediaTrack) -> (samples: SampleIndex?, damage: ISOBMFFError?) {
        do {
            return (try samples(of: track), nil)
        } catch let error as ISOBMFFError {
            if error.code == .endOfFile { return (nil, nil) }
            if track.problem == nil, (try? wholeSamples(of: track))?.truncation != nil { return (nil, nil) }
            return (nil, error)
        } catch {
            return (nil, nil)  // samples(of:) throws ISOBMFFError only.
        }
    }

    /// The `.endOfFile` error of a fragmented track whose file ends inside a fragment: its
    /// later samples, and later fragments, are lost.
    func fragmentCut(_ tables: TrackTables, of track: MediaTrack) -> ISOBMFFError? {
        guard let cut = tables.incompleteFragment?.offset else { return nil }
        return ISOBMFFError(.endOfFile, "the file ends at byte \(movie.fileLength), inside the fragment at byte "
                            + "\(cut): \(tables.table.sampleCount) whole samples of track \(track.id) lie before the cut",
                            path: "moof", offset: cut)
    }

    /// The samples of a track whose sample description is missing or unreadable (its
    /// ``MediaTrack/problem``) but whose other tables are intact, as ffprobe lists them with
    /// their codec unknown: for `probe --packets`, never for output (nothing says how to
    /// decode them). A regular file's track only; costs what ``samples(of:)`` costs.
    ///
    /// - Throws: the track's ``MediaTrack/problem`` in a fragmented file, or when the track
    ///   has none (then ``samples(of:)`` is the way); what ``samples(of:)`` throws when the
    ///   other tables contradict one another or point outside the file or into `moov`.
    public func samplesWithoutDescriptions(of track: MediaTrack) throws -> SampleIndex {
        guard let problem = track.problem, !movie.isFragmented else {
            return try samples(of: track)
        }
        let boxes: SampleTableBoxes
        do {
            boxes = try track.track.sampleTableWithoutDescriptions()
        } catch {
            throw problem
        }
        let table = try SampleTable(boxes: boxes, fileLength: movie.fileLength, excluding: [movie.movieBoxRange],
                                    withoutDescriptions: true)
        return try SampleIndex(table: table)
    }

    /// The checked sample tables of `track`: the one place a table that output or a report is
    /// built from comes from (``samples(of:)``, extraction, probe, chapters). From its `stbl`,
    /// or in a fragmented file from `moov` and every `moof` in file order; checked as a whole
    /// by ``SampleTable/init(boxes:fileLength:excluding:)``, every chunk inside the file and
    /// none overlapping `moov`. In a fragmented file that ends inside a fragment, the whole
    /// samples before the cut, and ``TrackTables/incompleteFragment`` says where it is.
    /// Costs O(table entries).
    ///
    /// - Throws: `.invalidSampleTable` and the other ``ISOBMFFError`` codes when the tables
    ///   contradict one another or point outside the file or into `moov`.
    public func sampleTable(of track: Track) throws -> TrackTables {
        let excluded = [movie.movieBoxRange]
        if movie.isFragmented {
            let fragmented = try movie.fragmentedTrack(track, in: source)
            let table = try SampleTable(boxes: fragmented.boxes, fileLength: movie.fileLength, excluding: excluded)
            return TrackTables(table: table, firstDecodeTime: fragmented.firstDecodeTime,
                               incompleteFragment: fragmented.incompleteFragmentOffset.map {
                                   (offset: $0, fragmentCount: fragmented.fragmentCount)
                               })
        }
        return TrackTables(table: try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                                  excluding: excluded))
    }

    /// The samples of `track` in a regular file cut short that lie wholly inside it, in order
    /// up to the first that does not: the one salvage rule (extraction's `--salvage`,
    /// ``wholeSamples(of:)``), ``SampleTable/init(wholeSamplesOf:fileLength:excluding:)`` with
    /// `moov` excluded. Costs O(samples kept + table entries).
    ///
    /// - Throws: what ``sampleTable(of:)`` throws for damage other than the cut: tables that
    ///   contradict one another or overlap `moov`.
    public func wholeSampleTable(of track: Track) throws -> SampleTable {
        try SampleTable(wholeSamplesOf: track.sampleTable(), fileLength: movie.fileLength,
                        excluding: [movie.movieBoxRange])
    }

    /// The samples of `track` that can be read, and why not all of them when the file was
    /// cut short (it ends inside a box, ``Movie/truncatedBox``, inside a fragment, or before
    /// chunks its tables place past its end, as when a tool dropped `mdat`): then
    /// the samples lying wholly inside the file, in order up to the first that does not —
    /// the rule of extraction's salvage, ``wholeSampleTable(of:)`` — with an `.endOfFile`
    /// error saying where the file ends. For a complete track, what ``samples(of:)``
    /// returns, with nil.
    ///
    /// - Throws: what ``samples(of:)`` throws for damage other than the cut: the track's
    ///   ``MediaTrack/problem``, tables that contradict one another or overlap `moov`.
    public func wholeSamples(of track: MediaTrack) throws -> (samples: SampleIndex, truncation: ISOBMFFError?) {
        if let problem = track.problem { throw problem }
        if movie.isFragmented {
            let tables = try sampleTable(of: track.track)
            let samples = try SampleIndex(table: tables.table, firstDecodeTime: tables.firstDecodeTime)
            return (samples, fragmentCut(tables, of: track))
        }
        do {
            return (try samples(of: track), nil)
        } catch let error as ISOBMFFError where error.code == .invalidSampleTable {
            // Throws again unless the tables hold together and only run past the file's end.
            let table = try wholeSampleTable(of: track.track)
            var cut = ""
            if let box = movie.truncatedBox {
                let claimed = box.offset.addingReportingOverflow(box.size)
                cut = ", inside the \(box.type) box at byte \(box.offset)"
                    + (claimed.overflow ? "" : " (it should run to byte \(claimed.partialValue))")
            }
            return (try SampleIndex(table: table),
                    ISOBMFFError(.endOfFile, "the file ends at byte \(movie.fileLength)\(cut): \(table.sampleCount) of "
                                 + "the \(track.track.declaredSampleCount) samples of track \(track.id) lie wholly "
                                 + "inside it (\(error.message))", path: error.path, offset: error.offset))
        }
    }

    /// The sample groups of `track` (`sgpd` and `sbgp`, ISO/IEC 14496-12 § 8.9: AAC's roll
    /// distance, …), from its `stbl` or gathered from every fragment, numbered as
    /// ``samples(of:)`` numbers the samples: what a writer's `setSampleGroups` takes.
    public func sampleGroups(of track: MediaTrack) throws
        -> (descriptions: [SampleGroupDescriptionBox], assignments: [SampleToGroupBox]) {
        let boxes = movie.isFragmented ? try movie.fragmentedTrack(track.track, in: source).boxes
            : try track.track.sampleTable()
        return (boxes.sampleGroupDescriptions, boxes.sampleToGroups)
    }

    /// How `track` is presented: ``TrackPresentation``, the one edit-list rule, checked
    /// against the media its samples really hold. Where the first audio track has no edit
    /// list, the file's `iTunSMPB` item (``GaplessInfo``) gives its priming and valid samples
    /// when its media timescale is its sample entry's rate; the edit is then in the media
    /// timescale (the presentation's ``TrackPresentation/isFromGaplessInfo``).
    public func presentation(of track: MediaTrack, samples: SampleIndex) -> TrackPresentation {
        // In fragments an edit of duration 0 presents up to the media's end: the last frame's
        // exactly (a bound would move the file's end on the one timeline past ffprobe's).
        guard movie.isFragmented else {
            return TrackPresentation(of: track.track, in: movie, mediaDuration: samples.totalDuration,
                                     mediaEnd: samples.presentationEnd)
        }
        let end = samples.latestPresentationEnd
        var presentation = TrackPresentation(of: track.track, in: movie, mediaDuration: samples.totalDuration,
                                             mediaEnd: end)
        if presentation.edits.isEmpty, !presentation.isFromGaplessInfo, track.timescale > 0 {
            // Without edits, a fragmented track placed by its tfdt on the clock the tracks
            // share (``CutPlan/timelineOffsets(of:)``) presents its frames at their
            // composition times, up to its last frame's end: a B-frame delay stays a delay,
            // as GStreamer places it and FFmpeg's packets do.
            presentation.seconds = Swift.max(presentation.seconds, Double(end) / Double(track.timescale))
        }
        return presentation
    }

    /// Whether `sample`'s bitstream says it is a key frame (``KeyFrameProbe``): nil when the
    /// track's codec has no probe (audio, intra-only, encrypted, unknown: trust the
    /// container) or the bytes do not say. Reads the sample's first 512 bytes into `buffer`
    /// (the picture header follows a few parameter sets and SEI messages), and only when they
    /// do not say, up to ``Limits/keyFrameProbeScanBytes``: `probe --packets` asks this of
    /// every video sample.
    ///
    /// - Throws: what the source throws when the bytes cannot be read.
    public func bitstreamKeyFrame(_ sample: Sample, of track: MediaTrack, buffer: inout [UInt8]) throws -> Bool? {
        let index = Int(sample.descriptionIndex) - 1
        guard index >= 0, index < track.sampleDescriptions.count,
              let entry = track.sampleDescriptions[index].video,
              let probe = KeyFrameProbe(sampleEntry: entry) else { return nil }
        var head = sample
        for limit in [512, Limits.keyFrameProbeScanBytes] {
            head.size = Swift.min(sample.size, UInt32(limit))
            try source.read(head, into: &buffer)
            if let answer = probe.isKeyFrame(buffer) { return answer }
            if head.size == sample.size { break }
        }
        return nil
    }

    /// Reads the bytes of `sample` into `buffer`, resized to the sample's size (its capacity
    /// is reused from one call to the next).
    ///
    /// - Throws: what the source throws when the bytes cannot be read.
    public func read(_ sample: Sample, into buffer: inout [UInt8]) throws {
        try source.read(sample, into: &buffer)
    }
}

extension MovieReader: Sendable where Source: Sendable {}

/// One track's checked sample tables, from ``MovieReader/sampleTable(of:)``: what
/// ``SampleIndex`` indexes and what a writer copies a track from.
public struct TrackTables: Sendable {
    /// The tables, checked as a whole.
    public var table: SampleTable
    /// The decode time of the first sample (a fragmented track's first `tfdt`), else 0.
    public var firstDecodeTime: UInt64 = 0
    /// When a fragmented file ends inside a fragment: where that fragment starts, and how
    /// many fragments held samples of the track (``FragmentedTrack/fragmentCount``); ``table`` holds the whole samples before
    /// the cut. Nil for a complete or a regular file.
    public var incompleteFragment: (offset: UInt64, fragmentCount: Int)?
}

extension ByteSource {
    /// Reads the bytes of `sample` into `buffer`, resized to the sample's size; the buffer's
    /// capacity is reused, so a loop over samples allocates only when a sample is larger
    /// than every one before.
    ///
    /// - Throws: what ``read(into:at:)`` throws (a short read, an I/O error).
    public func read(_ sample: Sample, into buffer: inout [UInt8]) throws {
        let size = Int(sample.size)  // A UInt32: fits in Int on 64-bit platforms.
        if buffer.count != size {
            if buffer.count > size {
                buffer.removeLast(buffer.count - size)
            } else {
                buffer.append(contentsOf: repeatElement(0, count: size - buffer.count))
            }
        }
        guard size > 0 else { return }
        try buffer.withUnsafeMutableBytes { try read(into: $0, at: sample.offset) }
    }
}

/// One track as ``MovieReader`` presents it: what it holds, how its times are counted,
/// its typed sample descriptions and its edit list. Its samples come from
/// ``MovieReader/samples(of:)``.
public struct MediaTrack: Sendable {
    /// The `trak` as parsed: every header box, for what this type does not surface.
    public let track: Track
    /// The `tkhd` track ID (what `ffprobe` prints as a stream's `id`, and `probe` as `ID`).
    public var id: UInt32 { track.trackID }
    /// Why the track cannot be read, found while opening the file (``Track/problem``: no
    /// readable `stsd`); nil does not promise that its sample tables are sound, which
    /// ``MovieReader/samples(of:)`` checks.
    public var problem: ISOBMFFError? { track.problem }
    /// What the track holds, from its handler.
    public var kind: TrackKind { TrackKind(handlerType: track.handlerType) }
    /// The media timescale (`mdhd`): sample times count in 1/timescale seconds.
    public var timescale: UInt32 { track.mediaHeader.timescale }
    /// The movie timescale (`mvhd`): edit list segment durations count in it.
    public let movieTimescale: UInt32
    /// The ISO 639-2 language (`mdhd`), such as `eng` or `und`; nil when the code is not one.
    public var language: String? { track.mediaHeader.languageCode }
    /// The edit list (`edts/elst`) as the file states it; apply it through
    /// ``MovieReader/presentation(of:samples:)``.
    public var editList: EditListBox? { track.editList }
    /// How far the `tkhd` matrix turns the picture clockwise, in degrees (0, 90, 180, 270);
    /// nil when the matrix is not a plain rotation.
    public var rotation: Int? { track.header.rotation }
    /// The sample descriptions (`stsd` entries), typed; samples refer to them by 1-based
    /// ``Sample/descriptionIndex``.
    public let sampleDescriptions: [SampleDescription]

    /// The codec of the first sample description (`mp4a`, `avc1`, …).
    public var format: FourCC? { sampleDescriptions.first?.format }

    init(track: Track, movie: Movie) {
        self.track = track
        movieTimescale = movie.header.timescale
        let kind = TrackKind(handlerType: track.handlerType)
        sampleDescriptions = track.sampleDescriptions.entries.map {
            SampleDescription(entry: $0, kind: kind, quickTimeLayout: movie.usesQuickTimeLayout)
        }
    }
}

/// One sample description (`stsd` entry, ISO/IEC 14496-12 § 8.5.2), kept as its bytes and
/// parsed by the track's kind: an ``AudioSampleEntry`` for sound, a ``VisualSampleEntry``
/// for video, each with its codec configuration box.
public struct SampleDescription: Sendable {
    /// The entry as it is in the file, for copying it through.
    public var entry: SampleDescriptionBox.Entry
    /// The parsed sound description, for an audio track whose entry parses.
    public var audio: AudioSampleEntry?
    /// The parsed visual description, for a video track whose entry parses.
    public var video: VisualSampleEntry?
    /// Why the entry could not be parsed as its track's kind says it should; nil when it
    /// was (or when the kind has no typed entry).
    public var parseError: ISOBMFFError?

    /// The coding name: `mp4a`, `avc1`, `alac`, …
    public var format: FourCC { entry.format }

    /// The codec configuration box: `esds`, `dOps`, `dfLa`, `alac`, `dac3`, `dec3` for
    /// audio (inside QuickTime's `wave` too), `avcC`, `hvcC`, `av1C`, `vpcC` for video.
    public var configuration: CodecConfigurationBox? {
        if let video { return video.configuration }
        guard let audio else { return nil }
        return CodecConfigurationBox.knownTypes.lazy.compactMap { audio.configuration($0) }.first
    }

    /// Parses `entry` as `kind` says: sound entries for audio tracks, visual ones for video.
    public init(entry: SampleDescriptionBox.Entry, kind: TrackKind, quickTimeLayout: Bool) {
        self.entry = entry
        do {
            switch kind {
            case .audio: audio = try AudioSampleEntry(parsing: entry, quickTimeLayout: quickTimeLayout)
            case .video: video = try VisualSampleEntry(parsing: entry)
            default: break
            }
        } catch let error as ISOBMFFError {
            parseError = error
        } catch {
            parseError = ISOBMFFError(.invalidValue, "\(error)", path: entry.path, offset: entry.fileOffset)
        }
    }
}
