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

    /// A progress report, for tests and for callers that relay progress of their own.
    public init(bytesDone: UInt64, bytesTotal: UInt64, samplesDone: Int, samplesTotal: Int) {
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.samplesDone = samplesDone
        self.samplesTotal = samplesTotal
    }
}

/// Copies a track's samples from the input to the output in sample order.
///
/// Chunks that follow each other in the input are read as one range; other tracks' bytes
/// (the video) are never read. The copying itself is ``RangeCopier``'s, shared with the
/// writer's file sink: small ranges gathered into one buffer, large ones copied in the
/// kernel.
///
/// A second walk over the ranges runs ahead of the copy and tells the kernel what comes
/// next (`posix_fadvise(WILLNEED)`), merging ranges separated by small gaps into one
/// advice, so a cold read streams instead of seeking and a warm one costs a few calls.
struct SampleCopier {
    let bufferSize: Int
    var progress: ((ExtractionProgress) -> Void)?
    var isCancelled: () -> Bool = { false }

    /// How far ahead of the copy the prefetch runs, in sample bytes.
    static let prefetchWindow: UInt64 = 16 << 20
    /// Ranges closer than this are advised as one span (the gap is read ahead too).
    static let prefetchGap: UInt64 = 256 << 10
    /// The largest span one advice covers.
    static let prefetchSpan: UInt64 = 8 << 20

    func copy(_ table: SampleTable, from source: some ByteSource, to sink: inout some ByteSink) throws {
        var copier = RangeCopier(bufferSize: bufferSize)
        defer { copier.deallocate() }
        // Read-ahead advice only where the source is a file that takes it.
        let advises = source.fileDescriptor != nil
        var ranges = RangeIterator(table.makeChunkIterator())
        var prefetch = Prefetcher(ranges: RangeIterator(table.makeChunkIterator()))
        var state = ExtractionProgress(bytesDone: 0, bytesTotal: table.totalSampleBytes, samplesDone: 0,
                                       samplesTotal: table.sampleCount)
        while let (range, samples) = ranges.next() {
            if isCancelled() { throw RemuxError(.cancelled, "cancelled") }
            if advises { prefetch.advise(source, upTo: state.bytesDone + Self.prefetchWindow) }
            try copier.copy(range, from: source, to: &sink, isCancelled: isCancelled) { count, inKernel in
                state.bytesDone += count
                if inKernel { progress?(state) }
            }
            state.samplesDone += samples
            progress?(state)
        }
        try copier.flush(to: &sink)
    }
}

/// Runs ahead of the copy, advising the kernel of the ranges to come.
struct Prefetcher {
    var ranges: RangeIterator
    /// Sample bytes advised so far.
    var advised: UInt64 = 0
    var pending: Range<UInt64>?

    /// Advises ranges until `advised` reaches `target` sample bytes.
    mutating func advise(_ file: some ByteSource, upTo target: UInt64) {
        while advised < target {
            guard var span = pending ?? ranges.next()?.0 else { return }
            pending = nil
            advised += span.upperBound - span.lowerBound
            // Merge the following ranges that lie just after this span.
            while span.upperBound - span.lowerBound < SampleCopier.prefetchSpan, let (next, _) = ranges.next() {
                guard next.lowerBound >= span.upperBound,
                      next.lowerBound - span.upperBound <= SampleCopier.prefetchGap else {
                    pending = next
                    break
                }
                span = span.lowerBound..<next.upperBound
                advised += next.upperBound - next.lowerBound
            }
            file.willNeed(span)
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
