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
    var interleaveSteps = 0

    /// The size of the whole file.
    var outputSize: UInt64 { UInt64(fileType.count + movieBox.count + mediaDataHeader.count) + payloadSize }

    static let chunkDuration = 0.5

    init(tracks: [TrackPlan], movieHeader: MovieHeaderBox, fileType: FileTypeBox) throws {
        // Interleave: each window of chunkDuration seconds holds one chunk per track (split
        // where the sample description changes).
        let times = tracks.map(\.decodeTimes)
        var cursors = [Int](repeating: 0, count: tracks.count)
        var chunks: [Chunk] = []
        var windowEnd = 0.0
        var steps = 0
        while zip(cursors, tracks).contains(where: { $0 < $1.sampleCount }) {
            steps += 1
            windowEnd += Self.chunkDuration
            for (t, track) in tracks.enumerated() {
                let timescale = Double(max(track.mediaHeader.timescale, 1))
                while cursors[t] < track.sampleCount && Double(times[t][cursors[t]]) / timescale < windowEnd {
                    let first = cursors[t]
                    var end = first
                    while end < track.sampleCount && Double(times[t][end]) / timescale < windowEnd
                        && track.descriptionIndexes[end] == track.descriptionIndexes[first] {
                        end += 1
                    }
                    chunks.append(Chunk(track: t, firstSample: first, sampleCount: end - first))
                    cursors[t] = end
                }
            }
        }
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
