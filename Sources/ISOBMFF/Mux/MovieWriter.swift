/// Writes a new MP4 from tracks and samples: the package's muxer.
///
/// Add tracks (``addTrack(_:)``), append each track's samples in decode order — as ranges
/// of a source (``append(_:from:to:)``, copied by the sink without passing through the
/// writer) or as bytes (``append(_:duration:compositionOffset:isSync:descriptionIndex:to:)``)
/// — then ``finish(_:into:progress:isCancelled:)``. The writer only plans: it hands the
/// sink a stream of ``MuxOperation``s ("write these bytes", "copy N bytes of source k at
/// offset o"), so it does no I/O and holds only the compressed tables (plus bytes appended
/// in memory, unless they are spilled to a store of the caller's).
///
/// Two layouts (ISO/IEC 14496-12 § 8.1, § 8.8):
/// - ``Layout/progressive``: `ftyp`, `moov`, then one `mdat` (fast start). Chunks of the
///   tracks are interleaved by decode time; the `moov` size depends only on the chunk
///   count and on `stco` versus `co64`, so it is computed once and the offsets follow.
/// - ``Layout/fragmented(seconds:segmentIndex:)``: `ftyp`, a `moov` with `mvex` (`mehd`, `trex`), then a
///   `moof` + `mdat` per fragment, cut at the sync samples of the first video track (or of
///   the first track when there is no video) about every `seconds`; each `traf` has a
///   `tfdt`. Memory per fragment is its samples' fields.
public struct MovieWriter: Sendable {
    /// How the file is laid out.
    public enum Layout: Sendable, Equatable {
        /// One `mdat` after a `moov` that indexes every sample (fast start).
        case progressive
        /// Movie fragments (fMP4/CMAF style) of about `seconds` each.
        /// `segmentIndex` adds a `sidx` (§ 8.16.3) before the first `moof`, indexing every
        /// fragment by the first video track (or the first track); it costs a first pass over
        /// the fragments' tables.
        case fragmented(seconds: Double, segmentIndex: Bool = false)
    }

    struct WrittenTrack: Sendable {
        var description: TrackDescription
        var trackID: UInt32
        var table = SampleTableWriter()
        var edits: [EditListBox.Entry]?
        var groupDescriptions: [SampleGroupDescriptionBox] = []
        var groupAssignments: [SampleToGroupBox] = []
    }

    /// The `ftyp`; nil for the default of the layout (`isom` with `iso2`/`avc1`/`mp41`, or
    /// `iso6` for fragments). Give the input's `ftyp` to keep a QuickTime file QuickTime.
    public var fileType: FileTypeBox?
    /// The movie timescale (`mvhd`), in which edit list durations count.
    public var movieTimescale: UInt32
    /// The `mvhd` creation time, in seconds since 1904-01-01 UTC; 0 for unknown. Copy the
    /// input's to keep when a recording was made.
    public var creationTime: UInt64 = 0
    /// The `mvhd` modification time, as ``creationTime``.
    public var modificationTime: UInt64 = 0
    /// `moov/udta`, header included, written unchanged (tags, chapters); nil for none.
    public var userData: [UInt8]?
    /// `moov/meta`, header included, written unchanged; nil for none.
    public var metadata: [UInt8]?
    /// The decode time a chunk of a progressive file spans at most (a chunk ends earlier
    /// at ``chunkBytes``).
    public var chunkSeconds: Double = 0.5
    /// The most sample bytes of one chunk (a single larger sample makes a chunk of its own).
    public var chunkBytes: UInt64 = 1 << 20
    var tracks: [WrittenTrack] = []
    /// Sample bytes appended in memory, referred to by ``SampleTableWriter/Location/memory``.
    var memory: [UInt8] = []
    /// Per source number a spill was given as, the bytes spilled to it so far.
    var spilled: [Int: UInt64] = [:]
    /// Whether ``writeFragment(into:)`` has written the init segment.
    var isStreaming = false
    /// Fragments written by ``writeFragment(into:)`` so far.
    var streamedFragments: UInt32 = 0
    /// Per track, the decode time where the next streamed fragment starts.
    var streamedDecodeTimes: [UInt64] = []

    /// An empty movie with the given movie timescale.
    public init(movieTimescale: UInt32 = 1000) {
        self.movieTimescale = movieTimescale
    }

    /// Adds a track and returns its track ID (1, 2, … in the order added).
    public mutating func addTrack(_ description: TrackDescription) throws -> UInt32 {
        guard !isStreaming else {
            throw ISOBMFFError(.invalidValue, "tracks cannot be added once fragments are streamed", path: "",
                               offset: nil)
        }
        guard description.timescale > 0 else {
            throw ISOBMFFError(.invalidValue, "a track's timescale must not be 0", path: "", offset: nil)
        }
        guard !description.sampleEntries.isEmpty, description.sampleEntries.allSatisfy({ $0.count >= 8 }) else {
            throw ISOBMFFError(.invalidValue, "a track needs at least one sample entry, each a whole box", path: "",
                               offset: nil)
        }
        let id = UInt32(tracks.count + 1)
        tracks.append(WrittenTrack(description: description, trackID: id))
        streamedDecodeTimes.append(0)
        return id
    }

    /// The samples appended to `track` so far, as the tables they become.
    public func table(of track: UInt32) -> SampleTableWriter? {
        index(of: track).map { tracks[$0].table }
    }

    /// The number of tracks added.
    public var trackCount: Int { tracks.count }

    func index(of track: UInt32) -> Int? {
        let index = Int(track) - 1
        return tracks.indices.contains(index) ? index : nil
    }

    func checkedIndex(_ track: UInt32) throws -> Int {
        guard let index = index(of: track) else {
            throw ISOBMFFError(.invalidValue, "no track with ID \(track) was added", path: "", offset: nil)
        }
        return index
    }

    /// Appends a sample whose bytes the sink copies from `source` (the caller's number for
    /// a source, which the sink resolves) at ``Sample/offset``: the zero-copy path. Only the
    /// sample's size, duration, composition offset, sync flag and description index are
    /// kept; its decode time follows from the durations before it.
    public mutating func append(_ sample: Sample, from source: Int, to track: UInt32) throws {
        let index = try checkedIndex(track)
        guard source >= 0 else {
            throw ISOBMFFError(.invalidValue, "source numbers start at 0", path: "", offset: nil)
        }
        try checkDescription(sample.descriptionIndex, index)
        try tracks[index].table.append(size: sample.size, duration: sample.duration,
                                       compositionOffset: sample.compositionOffset, isSync: sample.isSync,
                                       descriptionIndex: sample.descriptionIndex, source: source,
                                       offset: sample.offset)
    }

    /// Appends every sample of a checked table (``SampleTable``: a track's tables as
    /// ``Track/sampleTable()`` or the fragments give them), copied by the sink from
    /// `source`, each sample's description index mapped by `descriptionIndex`. Into a
    /// track with no samples yet this costs O(runs + chunks) and shares the table's arrays
    /// rather than copying them: the way to copy a long track whole.
    public mutating func append(contentsOf table: SampleTable, from source: Int, to track: UInt32,
                                descriptionIndex: (UInt32) -> UInt32 = { $0 }) throws {
        let index = try checkedIndex(track)
        guard source >= 0 else {
            throw ISOBMFFError(.invalidValue, "source numbers start at 0", path: "", offset: nil)
        }
        for run in table.boxes.sampleToChunk.entries {
            try checkDescription(descriptionIndex(run.sampleDescriptionIndex), index)
        }
        try tracks[index].table.append(contentsOf: table, source: source, descriptionIndex: descriptionIndex)
    }

    /// Appends a sample given as bytes, written at once to `spill` rather than kept: the
    /// writer's memory stays that of the tables however many bytes are appended (a
    /// progressive file's `moov` comes first, so the bytes must wait somewhere).
    ///
    /// `spill` is the caller's store (a temporary file: AudioRemux's `SpillFile`), which
    /// the sink must resolve as source number `source`: the writer copies the bytes back
    /// from there, at the offsets where it appended them (counted from 0 per source number,
    /// so one store serves any number of tracks).
    public mutating func append(_ bytes: [UInt8], duration: UInt32, compositionOffset: Int64 = 0, isSync: Bool = true,
                                descriptionIndex: UInt32 = 1, to track: UInt32, spillingTo spill: inout some ByteSink,
                                asSource source: Int) throws {
        let index = try checkedIndex(track)
        try checkDescription(descriptionIndex, index)
        guard source >= 0 else {
            throw ISOBMFFError(.invalidValue, "source numbers start at 0", path: "", offset: nil)
        }
        guard let size = UInt32(exactly: bytes.count) else {
            throw ISOBMFFError(.limitExceeded, "a sample of \(bytes.count) bytes exceeds 2^32 - 1", path: "",
                               offset: nil)
        }
        let offset = spilled[source] ?? 0
        try tracks[index].table.append(size: size, duration: duration, compositionOffset: compositionOffset,
                                       isSync: isSync, descriptionIndex: descriptionIndex, source: source,
                                       offset: offset)
        try spill.write(bytes)
        spilled[source] = offset + UInt64(size)  // The table refused a sum past 2^64 just above.
    }

    /// Appends a sample given as bytes, which the writer keeps until the file is written
    /// (or, with a live stream, until ``writeFragment(into:)``); to keep them out of memory,
    /// spill them (``append(_:duration:compositionOffset:isSync:descriptionIndex:to:spillingTo:asSource:)``).
    public mutating func append(_ bytes: [UInt8], duration: UInt32, compositionOffset: Int64 = 0, isSync: Bool = true,
                                descriptionIndex: UInt32 = 1, to track: UInt32) throws {
        let index = try checkedIndex(track)
        try checkDescription(descriptionIndex, index)
        guard let size = UInt32(exactly: bytes.count) else {
            throw ISOBMFFError(.limitExceeded, "a sample of \(bytes.count) bytes exceeds 2^32 - 1", path: "",
                               offset: nil)
        }
        try tracks[index].table.append(size: size, duration: duration, compositionOffset: compositionOffset,
                                       isSync: isSync, descriptionIndex: descriptionIndex,
                                       source: SampleTableWriter.Location.memory, offset: UInt64(memory.count))
        memory.append(contentsOf: bytes)
    }

    func checkDescription(_ descriptionIndex: UInt32, _ index: Int) throws {
        guard descriptionIndex >= 1, descriptionIndex <= tracks[index].description.sampleEntries.count else {
            throw ISOBMFFError(.invalidValue, "sample description index \(descriptionIndex) names no entry of "
                               + "track \(index + 1)", path: "", offset: nil)
        }
    }

    /// Sets the edit list (`elst`) of `track`: segment durations in the movie timescale,
    /// media times in the track's timescale. nil (the default) writes no `edts`.
    public mutating func setEdits(_ edits: [EditListBox.Entry]?, for track: UInt32) throws {
        tracks[try checkedIndex(track)].edits = edits
    }

    /// Sets the sample groups of `track` (`sgpd` and `sbgp`, ISO/IEC 14496-12 § 8.9), written
    /// unchanged into the `stbl` of a progressive file: the caller's assignments must count
    /// the samples as appended (an AAC track's `roll` group, copied whole, does). Fragmented
    /// files do not carry them.
    public mutating func setSampleGroups(_ descriptions: [SampleGroupDescriptionBox],
                                         assignments: [SampleToGroupBox], for track: UInt32) throws {
        let index = try checkedIndex(track)
        tracks[index].groupDescriptions = descriptions
        tracks[index].groupAssignments = assignments
    }

    /// Writes the movie to `sink`: the operations of ``forEachOperation(_:_:)`` in order.
    ///
    /// - Parameters:
    ///   - layout: progressive (`moov` first) or fragmented.
    ///   - sink: performs the operations; it must resolve the source numbers given to
    ///     ``append(_:from:to:)``.
    ///   - progress: called after each operation with the bytes written so far, and the
    ///     sample bytes written so far and in all.
    ///   - isCancelled: polled before each operation; when it returns true the writing
    ///     stops with ``MuxCancelled``, leaving a partial file in the sink.
    public func finish(_ layout: Layout, into sink: inout some MovieSink,
                       progress: ((MuxProgress) -> Void)? = nil, isCancelled: () -> Bool = { false }) throws {
        var state = MuxProgress(bytesDone: 0, sampleBytesDone: 0,
                                sampleBytesTotal: tracks.reduce(0) { $0 + $1.table.totalBytes })
        try forEachOperation(layout) { operation, isSampleData in
            if isCancelled() { throw MuxCancelled() }
            try sink.perform(operation)
            state.bytesDone += operation.byteCount
            if isSampleData { state.sampleBytesDone += operation.byteCount }
            progress?(state)
        }
    }

    /// Calls `body` with each operation that writes the file, in file order, and whether it
    /// carries sample data. Memory stays bounded: a progressive file's plan holds one entry
    /// per chunk; a fragmented file's, one fragment's samples.
    public func forEachOperation(_ layout: Layout, _ body: (MuxOperation, Bool) throws -> Void) throws {
        try withoutActuallyEscaping(body) { body in
            var emitter = Emitter(memory: memory, body: body)
            switch layout {
            case .progressive:
                try writeProgressive(&emitter)
            case let .fragmented(seconds, segmentIndex):
                try writeFragmented(seconds: seconds, segmentIndex: segmentIndex, &emitter)
            }
            try emitter.flush()
        }
    }

    /// Coalesces copies of contiguous source ranges into one operation.
    struct Emitter {
        let memory: [UInt8]
        let body: (MuxOperation, Bool) throws -> Void
        var pending: (source: Int, offset: UInt64, count: UInt64)?

        mutating func write(_ bytes: [UInt8]) throws {
            try flush()
            try body(.write(bytes[...]), false)
        }

        mutating func samples(_ location: SampleTableWriter.Location) throws {
            if location.source == SampleTableWriter.Location.memory {
                try flush()
                // Memory locations were recorded from `memory.count` and sizes appended after.
                let start = Int(location.offset)
                try body(.write(memory[start..<(start + Int(location.length))]), true)
                return
            }
            if let run = pending, run.source == location.source, run.offset + run.count == location.offset,
               run.count < 1 << 30 {
                pending = (run.source, run.offset, run.count + location.length)
            } else {
                try flush()
                pending = (location.source, location.offset, location.length)
            }
        }

        mutating func flush() throws {
            guard let run = pending else { return }
            pending = nil
            try body(.copy(source: run.source, offset: run.offset, count: run.count), true)
        }
    }

    // MARK: Boxes shared by both layouts

    var defaultFileType: FileTypeBox {
        FileTypeBox(majorBrand: .isom, minorVersion: 512, compatibleBrands: [.isom, "iso2", "avc1", "mp41"])
    }

    /// What is added to every composition offset of `track` and to the media time of each of
    /// its edits, so that it is written with no negative offset and presents the same frames
    /// at the same times: the most negative offset, negated, for a track with edits; 0
    /// otherwise (without an edit list, shifting every frame would delay the track), and 0
    /// for a live stream (``writeFragment(into:)``), whose later samples are not known when
    /// its edits are written.
    ///
    /// ISO/IEC 14496-12 allows negative offsets (`ctts` and `trun` version 1), but players
    /// read them wrong after an edit: GStreamer 1.22's qtdemux ends an edit's segment when a
    /// sample's *decode* time reaches the edit's end, a composition time, so with negative
    /// offsets it never pushes the frames decoded last (a cut of a Smooth Streaming file lost
    /// its last B-frame); FFmpeg 5.1 applies its `dts_shift` to an edited fragmented track
    /// and places frames before 0, dropping them. FFmpeg's own muxer writes non-negative
    /// offsets and an edit the same way unless told otherwise.
    func compositionShift(_ track: WrittenTrack) -> Int64 {
        track.edits == nil || isStreaming ? 0 : track.table.negativeOffsetSpan
    }

    /// The edit list written for `track`: the caller's; else, in a progressive file, one
    /// edit from media time 0 to where the last frame's presentation ends when that is
    /// past the media's end (frames decoded before they are shown, B-frames, with
    /// non-negative offsets); else none.
    ///
    /// Without an edit list the presentation is the media's duration (ISO/IEC 14496-12
    /// § 8.6.6: no edit list, the whole media at normal rate), and players keep to it:
    /// GStreamer 1.22 ends its default segment at the `mdhd` duration and drops the frames
    /// presented after it (the last 2 of a Bento4 fragmented file remuxed). The edit
    /// presents exactly the same frames at the same times and ends where FFmpeg's muxer
    /// ends its edit (`calc_pts_duration`: the largest pts + duration). Not for negative offsets
    /// (where edits are the caller's, ``compositionShift(_:)`` applies; without them the
    /// offsets are kept as they are) nor in fragments, whose samples are not all known
    /// when the `moov` is written.
    func writtenEdits(_ track: WrittenTrack, fragmented: Bool) -> [EditListBox.Entry]? {
        if let edits = track.edits { return edits }
        guard !fragmented, track.table.negativeOffsetSpan == 0, let end = track.table.presentationEnd,
              end > track.description.mediaDuration ?? track.table.duration,
              let duration = rescaleRoundingUp(end, from: track.description.timescale, to: movieTimescale)
        else { return nil }
        return [EditListBox.Entry(segmentDuration: duration, mediaTime: 0)]
    }

    /// The track's presented duration in the movie timescale: its edits, or its media.
    func presentedDuration(_ track: WrittenTrack, fragmented: Bool) -> UInt64 {
        if let edits = writtenEdits(track, fragmented: fragmented) {
            // Saturating: a caller's edits summing past 2^64 ticks are written as the maximum.
            return edits.totalDuration
        }
        return rescaleRoundingUp(track.table.duration, from: track.description.timescale, to: movieTimescale)
            ?? UInt64.max
    }

    func movieHeader(duration: UInt64) -> MovieHeaderBox {
        var header = MovieHeaderBox(timescale: movieTimescale, duration: duration,
                                    nextTrackID: UInt32(tracks.count + 1))
        header.creationTime = creationTime
        header.modificationTime = modificationTime
        return header
    }

    /// Writes one `trak`. `tables` writes the `stbl` children after `stsd`.
    func writeTrack(_ track: WrittenTrack, fragmented: Bool, into w: inout BoxWriter,
                            tables: (inout BoxWriter) -> Void) {
        let description = track.description
        w.box(.trak) { w in
            var header = TrackHeaderBox(trackID: track.trackID,
                                        duration: fragmented ? 0 : presentedDuration(track, fragmented: false),
                                        alternateGroup: description.alternateGroup, volume: description.volume,
                                        flags: description.flags)
            header.creationTime = description.creationTime
            header.modificationTime = description.modificationTime
            header.width = description.width
            header.height = description.height
            if let matrix = description.matrix, matrix.count == 9 { header.matrix = matrix }
            header.write(to: &w)
            if !description.references.isEmpty {
                w.box("tref") { w in
                    for (type, ids) in description.references.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                        w.box(type) { w in for id in ids { w.write(id) } }
                    }
                }
            }
            if let edits = writtenEdits(track, fragmented: fragmented) {
                let shift = compositionShift(track)
                let shifted = edits.map { edit in
                    var edit = edit
                    if !edit.isEmpty { edit.mediaTime &+= shift }  // Media times and offsets < 2^62.
                    return edit
                }
                w.box(.edts) { EditListBox(entries: shifted).write(to: &$0) }
            }
            w.box(.mdia) { w in
                var mediaHeader = MediaHeaderBox(timescale: description.timescale,
                                                 duration: fragmented ? 0
                                                     : description.mediaDuration ?? track.table.duration)
                mediaHeader.language = description.language
                mediaHeader.creationTime = description.mediaCreationTime
                mediaHeader.modificationTime = description.mediaModificationTime
                mediaHeader.write(to: &w)
                description.handler.write(to: &w)
                if let extendedLanguage = description.extendedLanguage { w.write(bytes: extendedLanguage) }
                w.box(.minf) { w in
                    w.write(bytes: description.mediaInformationHeader)
                    w.box(.dinf) { DataReferenceBox.selfContained.write(to: &$0) }
                    w.box(.stbl) { w in
                        SampleDescriptionBox(entries: description.sampleEntries.map {
                            .init(format: FourCC(rawValue: UInt32($0[4]) << 24 | UInt32($0[5]) << 16
                                                     | UInt32($0[6]) << 8 | UInt32($0[7])), bytes: $0)
                        }).write(to: &w)
                        tables(&w)
                    }
                }
            }
            if let userData = description.userData { w.write(bytes: userData) }
        }
    }

    func writeMovieTail(into w: inout BoxWriter) {
        if let userData { w.write(bytes: userData) }
        if let metadata { w.write(bytes: metadata) }
    }
}

/// How far ``MovieWriter/finish(_:into:progress:isCancelled:)`` has got.
public struct MuxProgress: Sendable, Equatable {
    /// Bytes of the file written so far, boxes included.
    public var bytesDone: UInt64
    /// Sample bytes written so far.
    public var sampleBytesDone: UInt64
    /// Sample bytes in all: where ``sampleBytesDone`` ends.
    public var sampleBytesTotal: UInt64

    /// A progress report from its fields.
    public init(bytesDone: UInt64, sampleBytesDone: UInt64, sampleBytesTotal: UInt64) {
        self.bytesDone = bytesDone
        self.sampleBytesDone = sampleBytesDone
        self.sampleBytesTotal = sampleBytesTotal
    }
}

/// Thrown by ``MovieWriter/finish(_:into:progress:isCancelled:)`` when `isCancelled`
/// returned true; the sink holds a partial file.
public struct MuxCancelled: Error, Sendable, Equatable {
    /// The error.
    public init() {}
}

extension MovieWriter {
    /// Adds `chapters` in both forms, after every other track has its samples and edits: a
    /// QuickTime chapter track (``ChapterTrack``) lasting to the movie's end (the longest
    /// track's presentation), named in each track's `tref/chap`, and Nero's `chpl` in
    /// ``userData`` for at most ``NeroChapters/maximumCount`` chapters (any other `chpl` is
    /// removed). Returns the track: its chapters as written, and how many there are, for
    /// ``ChapterTrack/neroLimitWarning(count:)``. Throws what ``ChapterTrack/init(chapters:endingAt:)`` throws.
    @discardableResult
    public mutating func addChapters(_ chapters: [Chapter]) throws -> ChapterTrack {
        let end = tracks.map { presentedDuration($0, fragmented: false) }.max() ?? 0
        let track = try ChapterTrack(chapters: chapters, endingAt: Double(end) / Double(max(movieTimescale, 1)))
        // Every track but the chapter tracks (chapter images) names it: FFmpeg takes the last
        // tref/chap it reads, so one on those would hide the others'.
        let named = Set(tracks.flatMap { track in (track.description.references["chap"] ?? []).filter { $0 != track.trackID } })
        let others = tracks.map(\.trackID).filter { !named.contains($0) }
        let id = try addTrack(track.description)
        for index in tracks.indices where others.contains(tracks[index].trackID) {
            // First, before the IDs already there (chapter images, say), which stay.
            tracks[index].description.references["chap"] = [id] + (tracks[index].description.references["chap"] ?? [])
        }
        for (sample, duration) in zip(track.samples, track.durations) {
            try append(sample, duration: duration, to: id)
        }
        try setEdits(track.edits(movieTimescale: movieTimescale), for: id)
        let nero = NeroChapters(fitting: track.chapters)
        userData = NeroChapters.userData(userData, replacingWith: nero)
        return track
    }
}
