import ISOBMFF

/// Performs a `MovieWriter`'s operations into any ``ByteSink``: the one copy loop of the
/// package, behind extraction, mux and remux (``MovieFileSink`` is this sink over a file).
///
/// Writes (boxes, bytes appended in memory) and small copies (an interleaved input has one
/// range per audio chunk, a few hundred bytes each) are gathered into one buffer written
/// out when full, so the output sees a few large writes; copies of a MiB or more go from
/// file to file in the kernel where the sink can (``ByteSink/copy(from:at:count:)``), and
/// through the buffer otherwise (``RangeCopier``).
///
/// A ``Prefetcher`` runs ahead of the copies and tells the kernel what comes next, so that
/// a cold read streams instead of seeking.
///
/// A struct, so that a copy loop holding it in a local variable pays no dynamic exclusivity
/// checks on its hot path (as a class it cost a tenth of the user time of an extraction);
/// call ``deallocate()`` when done.
struct CopyingMovieSink<Sink: ByteSink, Source: ByteSource>: MovieSink {
    /// Where the file goes; holds every byte once ``flush()`` has run.
    private(set) var sink: Sink
    /// The inputs that ``MuxOperation/copy(source:offset:count:)`` numbers refer to.
    let sources: [Source]
    private var copier: RangeCopier
    /// Polled between the pieces of a copy (a large copy runs in pieces of the buffer's size);
    /// when it returns true the copy stops with ``RemuxError/Code/cancelled``.
    var isCancelled: () -> Bool = { false }
    /// Called with the byte count of each piece of a copy once it is done (in the buffer or
    /// in the output): progress in the bytes copied from the sources.
    var copied: (UInt64) -> Void = { _ in }
    /// Advises the kernel of the ranges to come, in source 0.
    var prefetcher: Prefetcher?
    /// Bytes copied from the sources so far.
    private(set) var bytesCopied: UInt64 = 0
    /// Bytes of the file so far, written or buffered.
    private(set) var position: UInt64 = 0

    init(sink: Sink, sources: [Source], bufferSize: Int) {
        self.sink = sink
        self.sources = sources
        copier = RangeCopier(bufferSize: bufferSize)
    }

    /// Frees the copy buffer; the sink must not perform anything afterwards.
    func deallocate() {
        copier.deallocate()
    }

    mutating func perform(_ operation: MuxOperation) throws {
        switch operation {
        case .write(let bytes):
            try bytes.withUnsafeBytes { try copier.write($0, to: &sink) }
            position += UInt64(bytes.count)
        case let .copy(index, offset, count):
            guard sources.indices.contains(index) else {
                throw RemuxError(.invalidArgument, "copy from source \(index): only \(sources.count) sources given")
            }
            let source = sources[index]
            let (end, overflow) = offset.addingReportingOverflow(count)
            guard !overflow, end <= source.length else {
                throw RemuxError(.ioError, "\(source.name): a copy of \(count) bytes at \(offset) runs past its end")
            }
            if index == 0, prefetcher != nil, source.fileDescriptor != nil {
                prefetcher?.advise(source, upTo: bytesCopied + Prefetcher.window)
            }
            try copier.copy(offset..<end, from: source, to: &sink, isCancelled: isCancelled) { count, _ in
                bytesCopied += count
                copied(count)
            }
            position += count
        }
    }

    /// Writes out what is buffered: the sink then holds the whole file so far.
    mutating func flush() throws {
        try copier.flush(to: &sink)
    }
}

/// Runs ahead of a copy, advising the kernel of the ranges to come
/// (``ByteSource/willNeed(_:)``, `posix_fadvise(WILLNEED)` for a file), merging ranges
/// separated by small gaps into one advice: a cold read streams, a warm one costs a few calls.
struct Prefetcher {
    /// How far ahead of the copy the advice runs, in copied bytes.
    static let window: UInt64 = 16 << 20
    /// Ranges closer than this are advised as one span (the gap is read ahead too).
    static let gap: UInt64 = 256 << 10
    /// The largest span one advice covers.
    static let span: UInt64 = 8 << 20

    private var ranges: RangeIterator
    /// Bytes advised so far (of the ranges, not of their gaps).
    private var advised: UInt64 = 0
    private var pending: Range<UInt64>?

    /// Advice over the chunks of `table`, in order: the ranges the copy will read.
    init(_ table: SampleTable) {
        ranges = RangeIterator(table.makeChunkIterator())
    }

    /// Advises ranges until `advised` reaches `target` bytes.
    mutating func advise(_ file: some ByteSource, upTo target: UInt64) {
        while advised < target {
            guard var span = pending ?? ranges.next() else { return }
            pending = nil
            advised += span.upperBound - span.lowerBound
            // Merge the following ranges that lie just after this span.
            while span.upperBound - span.lowerBound < Self.span, let next = ranges.next() {
                guard next.lowerBound >= span.upperBound, next.lowerBound - span.upperBound <= Self.gap else {
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
    private var chunks: SampleTable.ChunkIterator
    private var pending: SampleTable.Chunk?

    init(_ chunks: SampleTable.ChunkIterator) {
        self.chunks = chunks
    }

    /// The next range.
    mutating func next() -> Range<UInt64>? {
        guard let first = pending ?? chunks.next() else { return nil }
        pending = nil
        // Validated: every chunk ends inside the file.
        var range = first.offset..<(first.offset + first.byteCount)
        while let chunk = chunks.next() {
            guard chunk.offset == range.upperBound else {
                pending = chunk
                break
            }
            range = range.lowerBound..<(chunk.offset + chunk.byteCount)
        }
        return range
    }
}
