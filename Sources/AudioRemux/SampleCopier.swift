import ISOBMFF

/// How far the copy has got, reported after each piece written.
public struct ExtractionProgress: Sendable, Equatable {
    /// Sample bytes copied so far, and in all.
    public var bytesDone: UInt64
    /// The sample bytes to copy in all: where ``bytesDone`` ends.
    public var bytesTotal: UInt64
    /// Samples whose bytes are all copied, and in all.
    public var samplesDone: Int
    /// The samples to copy in all: where ``samplesDone`` ends.
    public var samplesTotal: Int
}

/// Copies a track's samples from the input to the output in sample order.
///
/// Chunks that follow each other in the input are read as one range, so a track stored
/// contiguously is copied in a few large reads; other tracks' bytes (the video) are never
/// read. A second walk over the chunks runs a few MiB ahead of the copy and tells the
/// kernel which ranges come next (`posix_fadvise(WILLNEED)`), so a cold read streams
/// instead of seeking. Between a file and a file on Linux the bytes move in the kernel
/// (`copy_file_range`); otherwise through one reused buffer.
struct SampleCopier {
    let bufferSize: Int
    var progress: ((ExtractionProgress) -> Void)?
    var isCancelled: () -> Bool = { false }

    /// How far ahead of the copy the prefetch runs.
    static let prefetchWindow: UInt64 = 16 << 20

    func copy(_ table: SampleTable, from source: some ByteSource, to sink: inout some ByteSink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        let file = source as? InputFile
        var fastPath = file != nil && sink is OutputFile
        var ranges = RangeIterator(table.makeChunkIterator())
        var prefetch = RangeIterator(table.makeChunkIterator())
        var prefetched: UInt64 = 0
        var state = ExtractionProgress(bytesDone: 0, bytesTotal: table.totalSampleBytes, samplesDone: 0,
                                       samplesTotal: table.sampleCount)
        while let (range, samples) = ranges.next() {
            if let file {
                while prefetched < state.bytesDone + Self.prefetchWindow, let (ahead, _) = prefetch.next() {
                    file.willNeed(offset: ahead.lowerBound, length: ahead.upperBound - ahead.lowerBound)
                    prefetched += ahead.upperBound - ahead.lowerBound
                }
            }
            var offset = range.lowerBound
            while offset < range.upperBound {
                if isCancelled() { throw RemuxError(.cancelled, "cancelled") }
                let count = Int(min(UInt64(buffer.count), range.upperBound - offset))
                if fastPath, let file, let output = sink as? OutputFile,
                   let copied = try output.copy(from: file, at: offset, count: count) {
                    offset += UInt64(copied)
                    state.bytesDone += UInt64(copied)
                } else {
                    fastPath = false
                    let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                    try source.read(into: slice, at: offset)
                    try sink.write(UnsafeRawBufferPointer(slice))
                    offset += UInt64(count)
                    state.bytesDone += UInt64(count)
                }
                if offset == range.upperBound { state.samplesDone += samples }
                progress?(state)
            }
        }
    }
}

/// Coalesces consecutive chunks that are contiguous in the input into one byte range.
struct RangeIterator {
    var chunks: SampleTable.ChunkIterator
    var pending: SampleTable.Chunk?

    init(_ chunks: SampleTable.ChunkIterator) {
        self.chunks = chunks
    }

    /// The next range and the number of samples in it.
    mutating func next() -> (Range<UInt64>, Int)? {
        guard let first = pending ?? chunks.next() else { return nil }
        pending = nil
        // Validated: every chunk ends inside the file.
        var range = first.offset..<(first.offset + first.byteCount)
        var samples = first.sampleCount
        while let chunk = chunks.next() {
            guard chunk.offset == range.upperBound else {
                pending = chunk
                break
            }
            range = range.lowerBound..<(chunk.offset + chunk.byteCount)
            samples += chunk.sampleCount
        }
        return (range, samples)
    }
}
