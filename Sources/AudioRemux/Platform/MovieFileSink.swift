import ISOBMFF

/// Performs a `MovieWriter`'s operations into a new file, published atomically.
///
/// The copying is the package's one loop (`CopyingMovieSink`, shared with extraction):
/// small pieces (boxes, the chunks of an interleaved file, a few hundred bytes each) are
/// gathered with `pread` into one buffer that is written out when full, so the output sees
/// a few large writes; copies of a MiB or more go from file to file in the kernel
/// (`copy_file_range`) where the file systems allow it, through memory otherwise.
///
/// ```swift
/// let input = try InputFile(path: "in.mp4")
/// var sink = try MovieFileSink(destination: "out.mp4", overwrite: false, sources: [input])
/// try writer.finish(.progressive, into: &sink)
/// try sink.publish()   // without it, nothing is written: see below
/// ```
///
/// Nothing reaches `destination` until ``publish()``: a sink that goes away unpublished (an
/// error, a cancellation, a forgotten call) removes its temporary file, so the destination
/// keeps what it held. The `EverydayJobs` article writes a fragmented file this way.
public final class MovieFileSink: MovieSink {
    private var target: CopyingMovieSink<OutputFile, SomeSource>
    private let overwrite: Bool
    /// The inputs that `MuxOperation.copy(source:offset:count:)` numbers refer to: input
    /// files, a ``SpillFile``, any `ByteSource`.
    public var sources: [any ByteSource] { target.sources.map(\.base) }
    /// Polled between the pieces of a copy (a large copy runs in pieces of the buffer's
    /// size); when it returns true the copy stops with ``RemuxError/Code/cancelled``.
    public var isCancelled: () -> Bool {
        get { target.isCancelled }
        set { target.isCancelled = newValue }
    }

    /// Creates the output beside `destination` under a temporary name (see
    /// ``publish()``). Throws ``RemuxError/Code/destinationExists`` when `destination`
    /// exists and `overwrite` is false.
    public init(destination: String, overwrite: Bool, sources: [any ByteSource], bufferSize: Int = 1 << 20) throws(RemuxError) {
        do {
            target = CopyingMovieSink(sink: try OutputFile(destination: destination, overwrite: overwrite),
                                      sources: sources.map(SomeSource.init), bufferSize: bufferSize)
            self.overwrite = overwrite
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    /// A sink whose temporary file has `file`'s permissions (never wider) and, where the
    /// process may, its owner and group, before any byte is written (a tag rewrite).
    init(destination: String, overwrite: Bool, sources: [any ByteSource], keeping file: EditedFile) throws {
        target = CopyingMovieSink(sink: try OutputFile(destination: destination, overwrite: overwrite, keeping: file),
                                  sources: sources.map(SomeSource.init), bufferSize: 1 << 20)
        self.overwrite = overwrite
    }

    deinit {
        target.deallocate()
    }

    public func perform(_ operation: MuxOperation) throws(RemuxError) {
        try bridged {
            try target.perform(operation)
        }
    }

    /// Flushes what is buffered, syncs the file and moves it to its destination: either the
    /// whole file appears there or nothing does. Without a call the temporary file is
    /// removed when the sink goes away.
    public func publish() throws(RemuxError) {
        try publish(syncing: true)
    }

    /// ``publish()``, flushing the file to disk only when `syncing`: a file written into an
    /// ``OutputDirectory`` that flushes its files together (``OutputDirectory/syncsEachFile``
    /// false) is made durable by that folder's publish.
    func publish(syncing: Bool) throws(RemuxError) {
        try bridged {
            try target.flush()
            try target.sink.publish(overwrite: overwrite, syncing: syncing)
        }
    }

    /// Flushes, syncs and renames a tag rewrite to `readyPath`, complete, for copying back
    /// over a file with hard links (``OutputFile/finish(asReadyCopy:)``).
    func finish(asReadyCopy readyPath: String) throws {
        try target.flush()
        try target.sink.finish(asReadyCopy: readyPath)
    }

    /// Publishes a tag rewrite over the file it was made from, only if that file is still
    /// there unchanged (``OutputFile/publish(replacing:)``).
    func publish(replacing original: EditedFile) throws {
        try target.flush()
        try target.sink.publish(replacing: original)
    }
}

/// Any source, as one type for `CopyingMovieSink`'s list (an existential is not itself a
/// ``ByteSource``).
struct SomeSource: ByteSource {
    let base: any ByteSource

    var length: UInt64 { base.length }
    var name: String { base.name }
    var fileDescriptor: Int32? { base.fileDescriptor }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        try base.read(into: buffer, at: offset)
    }

    func willNeed(_ range: Range<UInt64>) {
        base.willNeed(range)
    }
}
