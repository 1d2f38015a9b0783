import ISOBMFF

/// Performs a `MovieWriter`'s operations into a new file, published atomically.
///
/// The copying is the extraction's (one loop for both): small pieces (boxes, the chunks of
/// an interleaved file, a few hundred bytes each) are gathered with `pread` into one buffer
/// that is written out when full, so the output sees a few large writes; copies of a MiB or
/// more go from file to file in the kernel (`copy_file_range`) where the file systems allow
/// it, through memory otherwise.
///
/// ```swift
/// let input = try InputFile(path: "in.mp4")
/// let sink = try MovieFileSink(destination: "out.mp4", overwrite: false, sources: [input])
/// try writer.finish(.progressive, into: &sink)
/// try sink.publish()
/// ```
public final class MovieFileSink: MovieSink {
    private var output: OutputFile
    /// The inputs that `MuxOperation.copy(source:offset:count:)` numbers refer to.
    public let sources: [InputFile]
    private var copier: RangeCopier
    private let overwrite: Bool
    /// Polled between the pieces of a copy (a large copy runs in pieces of the buffer's
    /// size); when it returns true the copy stops with ``RemuxError/Code/cancelled``.
    public var isCancelled: () -> Bool = { false }

    /// Creates the output beside `destination` under a temporary name (see
    /// ``publish()``). Throws ``RemuxError/Code/destinationExists`` when `destination`
    /// exists and `overwrite` is false.
    public init(destination: String, overwrite: Bool, sources: [InputFile], bufferSize: Int = 1 << 20) throws {
        output = try OutputFile(destination: destination, overwrite: overwrite)
        self.sources = sources
        self.overwrite = overwrite
        copier = RangeCopier(bufferSize: bufferSize)
    }

    deinit {
        copier.deallocate()
    }

    public func perform(_ operation: MuxOperation) throws {
        switch operation {
        case .write(let bytes):
            try bytes.withUnsafeBytes { try copier.write($0, to: &output) }
        case let .copy(index, offset, count):
            guard sources.indices.contains(index) else {
                throw RemuxError(.invalidArgument, "copy from source \(index): only \(sources.count) sources given")
            }
            let file = sources[index]
            let (end, overflow) = offset.addingReportingOverflow(count)
            guard !overflow, end <= file.length else {
                throw RemuxError(.ioError, "\(file.path): a copy of \(count) bytes at \(offset) runs past its end")
            }
            try copier.copy(offset..<end, from: file, to: &output, isCancelled: isCancelled, copied: { _, _ in })
        }
    }

    /// Flushes what is buffered, syncs the file and moves it to its destination: either the
    /// whole file appears there or nothing does. Without a call the temporary file is
    /// removed when the sink goes away.
    public func publish() throws {
        try copier.flush(to: &output)
        try output.publish(overwrite: overwrite)
    }
}
