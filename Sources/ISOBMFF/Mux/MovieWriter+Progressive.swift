/// ``MovieWriter``'s progressive layout (`ftyp`, `moov`, one `mdat`): the chunk plan, the
/// `moov` it sizes, and the operations that write it.
extension MovieWriter {
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
                    tablePositions.append(writeTables(track, sampleToChunk: plan.sampleToChunk[index],
                                                      offsets: plan.offsets[index], largeOffsets: largeOffsets,
                                                      into: &w))
                }
            }
            writeMovieTail(into: &w)
        }
        return (w.bytes, tablePositions)
    }

    /// Writes the `stbl` children after `stsd` of a progressive file's `track`, its chunks
    /// as `sampleToChunk` and `offsets` say (`co64` when `largeOffsets`). Returns where in
    /// `w` the chunk offsets' entries start.
    func writeTables(_ track: WrittenTrack, sampleToChunk: [SampleToChunkBox.Entry], offsets: [UInt64],
                     largeOffsets: Bool, into w: inout BoxWriter) -> Int {
        var position = 0
        TimeToSampleBox(entries: track.table.timeToSample).write(to: &w)
        track.table.compositionOffsetBox(shiftedBy: compositionShift(track))?.write(to: &w)
        track.table.syncSampleBox?.write(to: &w)
        SampleToChunkBox(entries: sampleToChunk).write(to: &w)
        track.table.write(sampleSizesTo: &w, allowingConstantSize: track.description.allowsConstantSampleSize)
        w.fullBox(largeOffsets ? .co64 : .stco, version: 0, flags: 0) { w in
            w.write(UInt32(offsets.count))  // < 2^30 chunks, as samples.
            position = w.count
            for offset in offsets {
                if largeOffsets { w.write(offset) } else { w.write(UInt32(truncatingIfNeeded: offset)) }
            }
        }
        // After the chunk offsets, as FFmpeg orders them.
        for group in track.groupDescriptions { group.write(to: &w) }
        for group in track.groupAssignments { group.write(to: &w) }
        return position
    }

    /// The `trak` of `track` alone, numbered `trackID`, all its samples in one chunk at
    /// `chunkOffset` (`co64` when `largeOffsets`), written by the code that writes every
    /// track of a progressive movie: for adding a track to an existing `moov` (a tag edit's
    /// chapter track, ``ChapterTrack/trackBox(trackID:movieTimescale:chunkOffset:largeOffsets:)``).
    /// Nil for a track not added.
    func trackBox(of track: UInt32, numbered trackID: UInt32, inOneChunkAt chunkOffset: UInt64,
                  largeOffsets: Bool) -> [UInt8]? {
        guard let index = index(of: track) else { return nil }
        var written = tracks[index]
        written.trackID = trackID
        let chunk = SampleToChunkBox.Entry(firstChunk: 1, samplesPerChunk: UInt32(clamping: written.table.count),
                                           sampleDescriptionIndex: 1)
        var w = BoxWriter()
        writeTrack(written, fragmented: false, into: &w) { w in
            _ = writeTables(written, sampleToChunk: [chunk], offsets: [chunkOffset], largeOffsets: largeOffsets,
                            into: &w)
        }
        return w.bytes
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
    func planProgressive() -> (ProgressiveLayout, [UInt8], [UInt8], ProgressivePlan) {
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

    func writeProgressive(_ emitter: inout Emitter) throws {
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
}
