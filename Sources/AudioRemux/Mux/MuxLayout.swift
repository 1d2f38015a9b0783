import ISOBMFF

/// Interleaves the tracks of a muxed movie into chunks of about half a second each, plans
/// `ftyp` + `moov` (faststart) + `mdat`, and streams the samples from their inputs.
struct MuxLayout {
    struct Chunk {
        var track: Int
        var firstSample: Int
        var sampleCount: Int
    }

    var fileType: [UInt8]
    var movieBox: [UInt8]
    var mediaDataHeader: [UInt8]
    var payloadSize: UInt64
    /// Chunks in file order.
    var chunks: [Chunk]
    /// How many steps the interleaving took (for tests: it must be bounded by the samples).
    var interleaveSteps: Int

    /// The size of the whole file.
    var outputSize: UInt64 { UInt64(fileType.count + movieBox.count + mediaDataHeader.count) + payloadSize }

    static let chunkDuration = 0.5

    /// Cuts each track into chunks of about ``chunkDuration`` of its decode time (and where
    /// its sample description changes), then merges the tracks' chunks by decode time.
    ///
    /// The work follows the samples really present, never the timeline they claim: one
    /// step per sample to cut the chunks and one per chunk to merge them, each merge step
    /// O(log tracks). (It used to walk the timeline in half-second windows, so that one
    /// `stts` delta of 2^32 ticks kept it busy for hours.) Returns the chunks in file order
    /// and the steps taken.
    static func interleave(_ tracks: [TrackPlan]) -> (chunks: [Chunk], steps: Int) {
        var steps = 0
        var perTrack: [[(start: UInt64, chunk: Chunk)]] = []
        for (t, track) in tracks.enumerated() {
            // chunkDuration (half a second) in the track's ticks, at least one tick.
            let span = max(UInt64(track.mediaHeader.timescale) / 2, 1)
            var deltas = track.timeToSample.entries.lazy.flatMap { repeatElement($0.sampleDelta, count: Int($0.sampleCount)) }
                .makeIterator()
            var list: [(start: UInt64, chunk: Chunk)] = []
            var time: UInt64 = 0
            var chunkStart: UInt64 = 0
            for sample in 0..<track.sampleCount {
                steps += 1
                if var last = list.last, time - chunkStart < span,
                   track.descriptionIndexes[sample] == track.descriptionIndexes[last.chunk.firstSample] {
                    last.chunk.sampleCount += 1
                    list[list.count - 1] = last
                } else {
                    list.append((time, Chunk(track: t, firstSample: sample, sampleCount: 1)))
                    chunkStart = time
                }
                // The sum of a copied table's deltas fits 64 bits (checked by SampleTable); the
                // music track is built here, so saturate rather than trust it: only the order of
                // the chunks depends on it.
                let (next, overflow) = time.addingReportingOverflow(UInt64(deltas.next() ?? 0))
                time = overflow ? .max : next
            }
            perTrack.append(list)
        }

        // A k-way merge over a binary heap of the tracks, keyed by the start of each track's
        // next chunk in seconds (compared exactly: a.start × b.timescale vs b.start × a.timescale).
        func precedes(_ a: Int, _ ai: Int, _ b: Int, _ bi: Int) -> Bool {
            let x = perTrack[a][ai].start.multipliedFullWidth(by: UInt64(max(tracks[b].mediaHeader.timescale, 1)))
            let y = perTrack[b][bi].start.multipliedFullWidth(by: UInt64(max(tracks[a].mediaHeader.timescale, 1)))
            if x.high != y.high { return x.high < y.high }
            if x.low != y.low { return x.low < y.low }
            return a < b
        }
        var next = [Int](repeating: 0, count: tracks.count)
        var heap = perTrack.indices.filter { !perTrack[$0].isEmpty }
        func less(_ i: Int, _ j: Int) -> Bool { precedes(heap[i], next[heap[i]], heap[j], next[heap[j]]) }
        func siftDown(_ start: Int) {
            var i = start
            while true {
                steps += 1
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count && less(l, m) { m = l }
                if r < heap.count && less(r, m) { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for i in stride(from: heap.count / 2, through: 0, by: -1) where !heap.isEmpty { siftDown(i) }
        var chunks: [Chunk] = []
        chunks.reserveCapacity(perTrack.reduce(0) { $0 + $1.count })
        while let t = heap.first {
            chunks.append(perTrack[t][next[t]].chunk)
            next[t] += 1
            if next[t] == perTrack[t].count {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
            }
            siftDown(0)
        }
        return (chunks, steps)
    }

    init(tracks: [TrackPlan], movieHeader: MovieHeaderBox, fileType: FileTypeBox) throws {
        let (chunks, steps) = Self.interleave(tracks)
        self.chunks = chunks
        interleaveSteps = steps
        payloadSize = tracks.reduce(UInt64(0)) { $0 + $1.sizes.reduce(UInt64(0)) { $0 + UInt64($1) } }
        self.fileType = fileType.serialized
        mediaDataHeader = MediaDataHeader.bytes(payloadSize: payloadSize)

        func build(dataStart: UInt64) -> [UInt8] {
            var chunkOffsets = [[UInt64]](repeating: [], count: tracks.count)
            var runs = [[SampleToChunkBox.Entry]](repeating: [], count: tracks.count)
            var position = dataStart
            for chunk in chunks {
                let track = tracks[chunk.track]
                chunkOffsets[chunk.track].append(position)
                let index = track.descriptionIndexes[chunk.firstSample]
                if let last = runs[chunk.track].last, last.samplesPerChunk == UInt32(chunk.sampleCount),
                   last.sampleDescriptionIndex == index {
                } else {
                    runs[chunk.track].append(.init(firstChunk: UInt32(chunkOffsets[chunk.track].count),
                                                   samplesPerChunk: UInt32(chunk.sampleCount),
                                                   sampleDescriptionIndex: index))
                }
                for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                    position += UInt64(track.sizes[sample])
                }
            }
            var w = BoxWriter()
            w.box(.moov) { moov in
                movieHeader.write(to: &moov)
                for (t, track) in tracks.enumerated() {
                    track.write(runs: runs[t], chunkOffsets: chunkOffsets[t], to: &moov)
                }
            }
            return w.bytes
        }
        var box = build(dataStart: 0)
        while true {
            let next = build(dataStart: UInt64(self.fileType.count + box.count + mediaDataHeader.count))
            if next.count == box.count {
                box = next
                break
            }
            box = next
        }
        movieBox = box
    }

    /// Writes the whole file: header boxes, then every chunk's samples from their inputs.
    func write<Source: ByteSource>(tracks: [TrackPlan], inputs: [Source], to sink: inout some ByteSink, bufferSize: Int,
               isCancelled: () -> Bool) throws {
        try sink.write(fileType)
        try sink.write(movieBox)
        try sink.write(mediaDataHeader)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bufferSize, 64 << 10), alignment: 4096)
        defer { buffer.deallocate() }
        var pending: (source: Int, range: Range<UInt64>)?
        func flush() throws {
            guard let (source, range) = pending else { return }
            pending = nil
            var offset = range.lowerBound
            while offset < range.upperBound {
                if isCancelled() { throw RemuxError(.cancelled, "cancelled") }
                let count = Int(min(UInt64(buffer.count), range.upperBound - offset))
                let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                try inputs[source].read(into: slice, at: offset)
                try sink.write(UnsafeRawBufferPointer(slice))
                offset += UInt64(count)
            }
        }
        for chunk in chunks {
            let track = tracks[chunk.track]
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let source = track.sources[sample]
                let start = track.offsets[sample]
                let end = start + UInt64(track.sizes[sample])  // Validated inside the input.
                if let current = pending, current.source == source, current.range.upperBound == start {
                    pending = (source, current.range.lowerBound..<end)
                } else {
                    try flush()
                    pending = (source, start..<end)
                }
            }
        }
        try flush()
    }
}
