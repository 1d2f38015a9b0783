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
    private(set) var tracks: [WrittenTrack] = []
    /// Sample bytes appended in memory, referred to by ``SampleTableWriter/Location/memory``.
    private var memory: [UInt8] = []
    /// Per source number a spill was given as, the bytes spilled to it so far.
    private var spilled: [Int: UInt64] = [:]
    /// Whether ``writeFragment(into:)`` has written the init segment.
    private var isStreaming = false
    /// Fragments written by ``writeFragment(into:)`` so far.
    private var streamedFragments: UInt32 = 0
    /// Per track, the decode time where the next streamed fragment starts.
    private var streamedDecodeTimes: [UInt64] = []

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

    private func index(of track: UInt32) -> Int? {
        let index = Int(track) - 1
        return tracks.indices.contains(index) ? index : nil
    }

    private func checkedIndex(_ track: UInt32) throws -> Int {
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

    private func checkDescription(_ descriptionIndex: UInt32, _ index: Int) throws {
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

    private var defaultFileType: FileTypeBox {
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
    private func presentedDuration(_ track: WrittenTrack, fragmented: Bool) -> UInt64 {
        if let edits = writtenEdits(track, fragmented: fragmented) {
            // Saturating: a caller's edits summing past 2^64 ticks are written as the maximum.
            return edits.totalDuration
        }
        return rescaleRoundingUp(track.table.duration, from: track.description.timescale, to: movieTimescale)
            ?? UInt64.max
    }

    private func movieHeader(duration: UInt64) -> MovieHeaderBox {
        var header = MovieHeaderBox(timescale: movieTimescale, duration: duration,
                                    nextTrackID: UInt32(tracks.count + 1))
        header.creationTime = creationTime
        header.modificationTime = modificationTime
        return header
    }

    /// Writes one `trak`. `tables` writes the `stbl` children after `stsd`.
    private func writeTrack(_ track: WrittenTrack, fragmented: Bool, into w: inout BoxWriter,
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

    private func writeMovieTail(into w: inout BoxWriter) {
        if let userData { w.write(bytes: userData) }
        if let metadata { w.write(bytes: metadata) }
    }

    // MARK: Progressive

    /// The chunk layout of a progressive file: what the `moov` size depends on.
    struct ProgressivePlan {
        /// Chunks in file order: track and byte count.
        var order: [(track: Int, byteCount: UInt64)] = []
        /// Per track, each chunk's offset from the start of the `mdat` payload.
        var offsets: [[UInt64]]
        /// Per track, the `stsc` runs.
        var sampleToChunk: [[SampleToChunkBox.Entry]]
        /// The `mdat` payload size.
        var payloadSize: UInt64 = 0
        /// The interleaver's work.
        var steps = 0
    }

    /// Cuts every track into chunks and orders them by decode time.
    func progressivePlan() -> ProgressivePlan {
        var plan = ProgressivePlan(offsets: Array(repeating: [], count: tracks.count),
                                   sampleToChunk: Array(repeating: [], count: tracks.count))
        var interleaver = Interleaver(tables: tracks.map(\.table), timescales: tracks.map(\.description.timescale),
                                      chunkSeconds: chunkSeconds, chunkBytes: chunkBytes)
        while let chunk = interleaver.next() {
            let t = chunk.track
            plan.order.append((t, chunk.byteCount))
            plan.offsets[t].append(plan.payloadSize)
            plan.payloadSize += chunk.byteCount  // At most the tracks' total bytes, each < 2^62.
            // Each track has < 2^30 samples, hence fewer chunks: the numbers fit 32 bits.
            let samples = UInt32(chunk.sampleCount)
            if let last = plan.sampleToChunk[t].last, last.samplesPerChunk == samples,
               last.sampleDescriptionIndex == chunk.descriptionIndex {
                continue
            }
            plan.sampleToChunk[t].append(.init(firstChunk: UInt32(plan.offsets[t].count), samplesPerChunk: samples,
                                               sampleDescriptionIndex: chunk.descriptionIndex))
        }
        plan.steps = interleaver.steps
        return plan
    }

    /// The `moov` of a progressive file with chunk offsets relative to the `mdat` payload,
    /// and where each offset table's entries start (to add the payload's position later).
    func progressiveMovieBox(_ plan: ProgressivePlan, largeOffsets: Bool) -> (bytes: [UInt8], tables: [Int]) {
        var tablePositions: [Int] = []
        // Reserved once: the tables of a long track take megabytes, which doubling growth
        // would copy again and again and briefly hold twice.
        var capacity = 4096 + (userData?.count ?? 0) + (metadata?.count ?? 0)
        for (index, track) in tracks.enumerated() {
            let table = track.table
            capacity += 1024 + track.description.sampleEntries.reduce(0) { $0 + $1.count }
                + (track.description.userData?.count ?? 0)
                + (table.listsSampleSizes(allowingConstantSize: track.description.allowsConstantSampleSize)
                    ? 4 * table.count : 0)
                + 4 * table.syncSampleNumbers.count + 8 * table.timeToSample.count + 8 * table.compositionRuns.count
                + 12 * plan.sampleToChunk[index].count + (largeOffsets ? 8 : 4) * plan.offsets[index].count
        }
        var w = BoxWriter(capacity: capacity)
        w.box(.moov) { w in
            movieHeader(duration: tracks.map { presentedDuration($0, fragmented: false) }.max() ?? 0).write(to: &w)
            for (index, track) in tracks.enumerated() {
                writeTrack(track, fragmented: false, into: &w) { w in
                    TimeToSampleBox(entries: track.table.timeToSample).write(to: &w)
                    track.table.compositionOffsetBox(shiftedBy: compositionShift(track))?.write(to: &w)
                    track.table.syncSampleBox?.write(to: &w)
                    SampleToChunkBox(entries: plan.sampleToChunk[index]).write(to: &w)
                    track.table.write(sampleSizesTo: &w,
                                      allowingConstantSize: track.description.allowsConstantSampleSize)
                    let offsets = plan.offsets[index]
                    w.fullBox(largeOffsets ? .co64 : .stco, version: 0, flags: 0) { w in
                        w.write(UInt32(offsets.count))  // < 2^30 chunks, as samples.
                        tablePositions.append(w.count)
                        for offset in offsets {
                            if largeOffsets { w.write(offset) } else { w.write(UInt32(truncatingIfNeeded: offset)) }
                        }
                    }
                    // After the chunk offsets, as FFmpeg orders them.
                    for group in track.groupDescriptions { group.write(to: &w) }
                    for group in track.groupAssignments { group.write(to: &w) }
                }
            }
            writeMovieTail(into: &w)
        }
        return (w.bytes, tablePositions)
    }

    /// What a progressive file will be, planned without writing anything: the chunk count,
    /// the interleaver's work, whether chunk offsets need `co64`, and the sizes.
    public struct ProgressiveLayout: Sendable, Equatable {
        /// The number of chunks, all tracks together.
        public var chunkCount: Int
        /// The interleaver's steps: one per sample placed and per heap level moved through;
        /// bounded by the sample count times a small factor, never by the durations.
        public var interleaverSteps: Int
        /// Whether the chunk offsets are written as `co64` (the `mdat` ends past 4 GiB).
        public var usesLargeOffsets: Bool
        /// The size of the `moov` box.
        public var movieBoxSize: Int
        /// The size of the whole file.
        public var fileSize: UInt64
    }

    /// Plans the progressive layout: chunks, `stco` or `co64`, sizes. Costs what writing the
    /// `moov` costs, no sample bytes.
    public func progressiveLayout() -> ProgressiveLayout {
        let (layout, _, _, _) = planProgressive()
        return layout
    }

    /// The layout, the `ftyp`, the finished `moov` and the chunk order.
    private func planProgressive() -> (ProgressiveLayout, [UInt8], [UInt8], ProgressivePlan) {
        var typeWriter = BoxWriter()
        (fileType ?? defaultFileType).write(to: &typeWriter)
        let plan = progressivePlan()
        var (movie, tables) = progressiveMovieBox(plan, largeOffsets: false)
        let mdatHeader = MediaDataHeader.bytes(payloadSize: plan.payloadSize)
        var payloadStart = UInt64(typeWriter.count + movie.count + mdatHeader.count)
        let largeOffsets = plan.payloadSize > 0 && payloadStart + plan.payloadSize - 1 > UInt64(UInt32.max)
        if largeOffsets {
            (movie, tables) = progressiveMovieBox(plan, largeOffsets: true)
            payloadStart = UInt64(typeWriter.count + movie.count + mdatHeader.count)
        }
        // Add the payload's position to each relative offset, in place: the moov's size
        // does not change, so nothing else moves.
        let width = largeOffsets ? 8 : 4
        for (track, start) in tables.enumerated() {
            for chunk in plan.offsets[track].indices {
                let at = start + chunk * width
                var value = plan.offsets[track][chunk] + payloadStart
                for byte in (0..<width).reversed() {
                    movie[at + byte] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                }
            }
        }
        let layout = ProgressiveLayout(chunkCount: plan.order.count, interleaverSteps: plan.steps,
                                       usesLargeOffsets: largeOffsets, movieBoxSize: movie.count,
                                       fileSize: payloadStart + plan.payloadSize)
        return (layout, typeWriter.bytes, movie, plan)
    }

    private func writeProgressive(_ emitter: inout Emitter) throws {
        let (_, fileType, movie, plan) = planProgressive()
        let mdatHeader = MediaDataHeader.bytes(payloadSize: plan.payloadSize)
        try emitter.write(fileType)
        try emitter.write(movie)
        try emitter.write(mdatHeader)
        var locations = tracks.map { SampleTableWriter.LocationCursor($0.table) }
        for (track, byteCount) in plan.order {
            try locations[track].take(byteCount) { try emitter.samples($0) }
        }
    }

    // MARK: Fragmented

    /// The sample flags of § 8.8.3.1: a sync sample depends on no other
    /// (`sample_depends_on` 2); any other depends on others (1) and is non-sync.
    static let syncSampleFlags: UInt32 = 0x0200_0000
    static let nonSyncSampleFlags: UInt32 = 0x0101_0000

    /// `ftyp` and the `moov` of a fragmented file (the init segment); `mehd` only when the
    /// duration is known.
    private func fragmentedHead(duration: UInt64?) -> [UInt8] {
        var head = BoxWriter()
        (fileType ?? FileTypeBox(majorBrand: "iso6", minorVersion: 0,
                                 compatibleBrands: ["iso6", .isom, "iso2", "avc1", "mp41"])).write(to: &head)
        head.box(.moov) { w in
            movieHeader(duration: 0).write(to: &w)
            for track in tracks {
                writeTrack(track, fragmented: true, into: &w) { w in
                    TimeToSampleBox(entries: []).write(to: &w)
                    SampleToChunkBox(entries: []).write(to: &w)
                    SampleSizeBox(constantSize: 0, sampleCount: 0).write(to: &w)
                    ChunkOffsetBox(offsets: []).write(to: &w)
                }
            }
            w.box(.mvex) { w in
                if let duration { MovieExtendsHeaderBox(fragmentDuration: duration).write(to: &w) }
                for track in tracks { TrackExtendsBox(trackID: track.trackID).write(to: &w) }
            }
            writeMovieTail(into: &w)
        }
        return head.bytes
    }

    /// Live streaming: the decode time (`tfdt`) where the first fragment of `track` starts, 0
    /// unless set: a packager copying a track whose media starts later (a fragmented input's
    /// first `tfdt`) keeps its decode times, so that its edit list still names the same media.
    /// Only before the first ``writeFragment(into:)``.
    public mutating func setFirstDecodeTime(_ time: UInt64, for track: UInt32) throws {
        let index = try checkedIndex(track)
        guard !isStreaming else {
            throw ISOBMFFError(.invalidValue, "the first decode time is set before fragments are streamed", path: "",
                               offset: nil)
        }
        streamedDecodeTimes[index] = time
    }

    /// Live streaming: continues a stream whose init segment and first `count` fragments were
    /// written elsewhere (an on-demand server building fragment `count + 1` alone): the next
    /// ``writeFragment(into:)`` writes no init segment and numbers its fragment `count + 1`.
    /// Set the decode time where it starts with ``setFirstDecodeTime(_:for:)`` first. Only
    /// before the first ``writeFragment(into:)``.
    public mutating func resumeStream(afterFragments count: UInt32) throws {
        guard !isStreaming else {
            throw ISOBMFFError(.invalidValue, "a stream is resumed before fragments are streamed", path: "",
                               offset: nil)
        }
        isStreaming = true
        streamedFragments = count
    }

    /// Live streaming: writes the samples appended since the last call as one fragment
    /// (`moof` + `mdat`), preceded on the first call by the init segment (`ftyp` and a
    /// `moov` without `mehd`), then forgets them — their tables and any bytes appended in
    /// memory — so memory stays bounded by one fragment however long the stream runs.
    ///
    /// Cut where a fragment should start (before a video sync sample). Tracks cannot be
    /// added after the first call. Do not mix with ``finish(_:into:progress:isCancelled:)``.
    public mutating func writeFragment(into sink: inout some MovieSink) throws {
        if !isStreaming {
            isStreaming = true  // First: a stream keeps its offsets as appended (compositionShift).
            try sink.perform(.write(fragmentedHead(duration: nil)[...]))
        }
        guard tracks.contains(where: { $0.table.count > 0 }) else { return }
        guard streamedFragments < UInt32.max else {
            throw ISOBMFFError(.limitExceeded, "more than 2^32 - 1 fragments", path: "moof", offset: nil)
        }
        streamedFragments += 1
        var runs = Array(repeating: FragmentRun(), count: tracks.count)
        for index in tracks.indices {
            var cursor = tracks[index].table.makeCursor()
            while let entry = cursor.peek() {
                // Decode times continue from the fragments already written (< 2^64: the sum of
                // every appended duration, each track's checked when appended).
                runs[index].add(entry, decodeTime: streamedDecodeTimes[index] &+ cursor.decodeTime)
                _ = cursor.next()
            }
        }
        let (moof, payload) = try fragmentBox(streamedFragments, runs)
        try withoutActuallyEscaping({ (operation: MuxOperation, _: Bool) in try sink.perform(operation) }) { body in
            var emitter = Emitter(memory: memory, body: body)
            try emitter.write(moof)
            try emitter.write(MediaDataHeader.bytes(payloadSize: payload))
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                var locations = SampleTableWriter.LocationCursor(tracks[index].table)
                try locations.take(run.byteCount) { try emitter.samples($0) }
            }
            try emitter.flush()
        }
        for index in tracks.indices {
            let (sum, overflow) = streamedDecodeTimes[index].addingReportingOverflow(tracks[index].table.duration)
            streamedDecodeTimes[index] = overflow ? UInt64.max : sum
            tracks[index].table = SampleTableWriter()
        }
        memory = []
    }

    private func writeFragmented(seconds: Double, segmentIndex: Bool, _ emitter: inout Emitter) throws {
        try emitter.write(fragmentedHead(duration: tracks.map { presentedDuration($0, fragmented: true) }.max() ?? 0))

        let leader = tracks.firstIndex { $0.description.handler.handlerType == .vide } ?? 0
        if segmentIndex, tracks.indices.contains(leader) {
            // A first pass sizes every fragment (one reference, 12 bytes, each) for the sidx.
            var references: [(size: UInt32, duration: UInt32, startsWithSync: Bool)] = []
            var earliest: Int64?
            try forEachFragment(seconds: seconds, leader: leader) { sequence, runs in
                let (moof, _) = try fragmentBox(sequence, runs)
                let payload = runs.reduce(UInt64(0)) { $0 + $1.byteCount }
                let size = UInt64(moof.count + MediaDataHeader.bytes(payloadSize: payload).count) + payload
                let run = runs[leader]
                let duration = run.durations.reduce(UInt64(0)) { $0 + UInt64($1) }
                guard let size32 = UInt32(exactly: size), size32 < 1 << 31,
                      let duration32 = UInt32(exactly: duration) else {
                    throw ISOBMFFError(.limitExceeded, "fragment \(sequence) is too large for a sidx reference "
                                       + "(2 GiB, 2^32 ticks): use shorter fragments", path: "sidx", offset: nil)
                }
                if earliest == nil {
                    earliest = zip(run.compositionOffsets, run.durations.indices).map { offset, index in
                        Int64(clamping: run.baseDecodeTime) + Int64(run.durations[..<index].reduce(0) { $0 + Int($1) })
                            + offset
                    }.min()
                }
                references.append((size32, duration32, run.flags.first == Self.syncSampleFlags))
            }
            var w = BoxWriter()
            w.fullBox("sidx", version: 1, flags: 0) { w in
                w.write(tracks[leader].trackID)  // reference_ID
                w.write(tracks[leader].description.timescale)
                w.write(UInt64(max(0, earliest ?? 0)))  // earliest_presentation_time
                w.write(UInt64(0))  // first_offset: the first moof follows the sidx
                w.write(UInt16(0))  // reserved
                w.write(UInt16(truncatingIfNeeded: references.count))
                for reference in references {
                    w.write(reference.size)  // reference_type 0 (media), referenced_size
                    w.write(reference.duration)  // subsegment_duration
                    // starts_with_SAP, SAP_type 1 when the fragment starts with a sync sample.
                    w.write(reference.startsWithSync ? UInt32(0x9000_0000) : 0)
                }
            }
            guard references.count <= Int(UInt16.max) else {
                throw ISOBMFFError(.limitExceeded, "\(references.count) fragments exceed the 65535 references of "
                                   + "one sidx: use longer fragments", path: "sidx", offset: nil)
            }
            try emitter.write(w.bytes)
        }
        var locations = tracks.map { SampleTableWriter.LocationCursor($0.table) }
        try forEachFragment(seconds: seconds, leader: leader) { sequence, runs in
            let (moof, payload) = try fragmentBox(sequence, runs)
            try emitter.write(moof)
            try emitter.write(MediaDataHeader.bytes(payloadSize: payload))
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                try locations[index].take(run.byteCount) { try emitter.samples($0) }
            }
        }
    }

    /// Cuts the samples into fragments: the leader's samples up to its first sync sample
    /// past `seconds`, and every other track's samples decoded before that cut.
    private func forEachFragment(seconds: Double, leader: Int,
                                 _ body: (UInt32, [FragmentRun]) throws -> Void) throws {
        var cursors = tracks.map { $0.table.makeCursor() }
        let shifts = tracks.map(compositionShift)
        var sequence: UInt32 = 0
        while cursors.contains(where: { $0.peek() != nil }) {
            guard sequence < UInt32.max else {
                throw ISOBMFFError(.limitExceeded, "more than 2^32 - 1 fragments", path: "moof", offset: nil)
            }
            sequence += 1
            var fragments = Array(repeating: FragmentRun(), count: tracks.count)
            // At most maximumFragmentPayload + one sample (< 2^32) bytes: below 2^31 - moof.
            var fragmentBytes: UInt64 = 0
            var end: (time: UInt64, timescale: UInt32)?
            if tracks.indices.contains(leader) {
                let timescale = tracks[leader].description.timescale
                let target = ticks(seconds, timescale: timescale)
                let start = cursors[leader].decodeTime
                while let entry = cursors[leader].peek() {
                    if !fragments[leader].sizes.isEmpty {
                        if entry.descriptionIndex != fragments[leader].descriptionIndex { break }
                        if fragmentBytes + UInt64(entry.size) > Limits.maximumFragmentPayload { break }
                        if entry.isSync && cursors[leader].decodeTime - start >= target { break }
                    }
                    fragmentBytes += UInt64(entry.size)
                    fragments[leader].add(entry, decodeTime: cursors[leader].decodeTime, shift: shifts[leader])
                    _ = cursors[leader].next()
                }
                if cursors[leader].peek() != nil { end = (cursors[leader].decodeTime, timescale) }
            }
            for track in tracks.indices where track != leader {
                let timescale = tracks[track].description.timescale
                while let entry = cursors[track].peek() {
                    if let end {
                        let here = cursors[track].decodeTime.multipliedFullWidth(by: UInt64(end.timescale))
                        let limit = end.time.multipliedFullWidth(by: UInt64(timescale))
                        guard here.high < limit.high || (here.high == limit.high && here.low < limit.low) else { break }
                    }
                    if !fragments[track].sizes.isEmpty, entry.descriptionIndex != fragments[track].descriptionIndex {
                        break
                    }
                    if fragmentBytes > 0, fragmentBytes + UInt64(entry.size) > Limits.maximumFragmentPayload { break }
                    fragmentBytes += UInt64(entry.size)
                    fragments[track].add(entry, decodeTime: cursors[track].decodeTime, shift: shifts[track])
                    _ = cursors[track].next()
                }
            }
            try body(sequence, fragments)
        }
    }

    /// The samples of one track in one fragment.
    ///
    /// A sample of 0 bytes is not written into a `trun`: FFmpeg 5.1 refuses a fragmented file
    /// whose run lists one ("Invalid data found when processing input"), though it reads
    /// the same sample in a regular file. Its time goes to the sample before it in the run
    /// (as FFmpeg's own muxer, which drops an empty packet, leaves it), or, first in the
    /// run, to the one after it, presented at the same time as before. It holds no bytes,
    /// so the fragment's data is unchanged. ``droppedEmptySamples`` counts them.
    struct FragmentRun {
        var baseDecodeTime: UInt64 = 0
        var descriptionIndex: UInt32 = 1
        var sizes: [UInt32] = []
        var durations: [UInt32] = []
        var flags: [UInt32] = []
        var compositionOffsets: [Int64] = []
        var byteCount: UInt64 = 0
        /// Ticks of empty samples at the start of the run, given to its first written sample.
        var leadingEmptyTicks: UInt32 = 0
        var droppedEmptySamples = 0

        /// Adds `entry`, its composition offset moved by `shift` (``compositionShift(_:)``).
        mutating func add(_ entry: SampleTableWriter.Entry, decodeTime: UInt64, shift: Int64 = 0) {
            if sizes.isEmpty && leadingEmptyTicks == 0 {
                baseDecodeTime = decodeTime
                descriptionIndex = entry.descriptionIndex
            }
            if entry.size == 0 {
                if let last = durations.indices.last {
                    let (sum, overflow) = durations[last].addingReportingOverflow(entry.duration)
                    if !overflow {
                        durations[last] = sum
                        droppedEmptySamples += 1
                        return
                    }
                } else {
                    let (sum, overflow) = leadingEmptyTicks.addingReportingOverflow(entry.duration)
                    if !overflow {
                        leadingEmptyTicks = sum
                        droppedEmptySamples += 1
                        return
                    }
                }
            }
            var entry = entry
            entry.compositionOffset &+= shift  // Offsets are 32-bit, the shift one's negation.
            if sizes.isEmpty && leadingEmptyTicks > 0 {
                // Decoded where the empty samples were, presented where it was.
                let (sum, overflow) = entry.duration.addingReportingOverflow(leadingEmptyTicks)
                if !overflow {
                    entry.duration = sum
                    entry.compositionOffset += Int64(leadingEmptyTicks)  // |offset| < 2^33: no overflow.
                }
                leadingEmptyTicks = 0
            }
            sizes.append(entry.size)
            durations.append(entry.duration)
            flags.append(entry.isSync ? MovieWriter.syncSampleFlags : MovieWriter.nonSyncSampleFlags)
            compositionOffsets.append(entry.compositionOffset)
            byteCount += UInt64(entry.size)
        }
    }

    /// The `moof` of one fragment, its data offsets final, and the size of its `mdat` payload.
    private func fragmentBox(_ sequence: UInt32, _ runs: [FragmentRun]) throws -> ([UInt8], UInt64) {
        var w = BoxWriter()
        var dataOffsetPositions: [Int] = []
        w.box(.moof) { w in
            MovieFragmentHeaderBox(sequenceNumber: sequence).write(to: &w)
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                w.box("traf") { w in
                    var header = TrackFragmentHeaderBox(trackID: tracks[index].trackID)
                    if run.descriptionIndex != 1 { header.sampleDescriptionIndex = run.descriptionIndex }
                    let sameDuration = run.durations.allSatisfy { $0 == run.durations[0] }
                    let sameSize = run.sizes.allSatisfy { $0 == run.sizes[0] }
                    let sameFlags = run.flags.allSatisfy { $0 == run.flags[0] }
                    if sameDuration { header.defaultSampleDuration = run.durations[0] }
                    if sameSize { header.defaultSampleSize = run.sizes[0] }
                    if sameFlags { header.defaultSampleFlags = run.flags[0] }
                    header.write(to: &w)
                    TrackFragmentDecodeTimeBox(baseMediaDecodeTime: run.baseDecodeTime).write(to: &w)
                    let hasOffsets = run.compositionOffsets.contains { $0 != 0 }
                    var trun = TrackRunBox(version: run.compositionOffsets.contains { $0 < 0 } ? 1 : 0,
                                           sampleCount: UInt32(run.sizes.count), dataOffset: 0,
                                           durations: sameDuration ? [] : run.durations,
                                           sizes: sameSize ? [] : run.sizes,
                                           compositionTimeOffsets: hasOffsets ? run.compositionOffsets.map {
                                               UInt32(truncatingIfNeeded: $0)
                                           } : [])
                    if !sameFlags {
                        trun.sampleFlags = run.flags
                        trun.flags |= TrackRunBox.sampleFlagsPresent
                    }
                    // The data offset follows the trun's header, version and flags, and count.
                    dataOffsetPositions.append(w.count + 16)
                    trun.write(to: &w)
                }
            }
        }
        var moof = w.bytes
        let payload = runs.reduce(UInt64(0)) { $0 + $1.byteCount }
        let mdatHeader = MediaDataHeader.bytes(payloadSize: payload)
        var dataOffset = UInt64(moof.count + mdatHeader.count)
        for (position, run) in zip(dataOffsetPositions, runs.filter { !$0.sizes.isEmpty }) {
            // Fragments hold at most Limits.maximumFragmentPayload bytes but for one sample: only
            // a sample of over a GiB gets here.
            guard let value = Int32(exactly: dataOffset) else {
                throw ISOBMFFError(.limitExceeded, "fragment \(sequence) holds a sample too large to address "
                                   + "(data offsets are signed 32-bit)", path: "moof", offset: nil)
            }
            let bits = UInt32(bitPattern: value)
            for byte in 0..<4 { moof[position + byte] = UInt8(truncatingIfNeeded: bits >> (24 - 8 * byte)) }
            dataOffset += run.byteCount
        }
        return (moof, payload)
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
