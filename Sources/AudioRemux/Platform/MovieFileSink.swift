import ISOBMFF

/// Performs a `MovieWriter`'s operations into a new file, published atomically.
///
/// The fast paths of the extraction's copy loop: small pieces (boxes, the chunks of an
/// interleaved file, a few hundred bytes each) are gathered with `pread` into one buffer
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
    private let output: OutputFile
    /// The inputs that `MuxOperation.copy(source:offset:count:)` numbers refer to.
    public let sources: [InputFile]
    private let buffer: UnsafeMutableRawBufferPointer
    private var fill = 0
    private var kernelCopy = true
    private let overwrite: Bool

    /// Copies of at least this many bytes go through `copy_file_range`.
    static let kernelCopyThreshold: UInt64 = 1 << 20

    /// Creates the output beside `destination` under a temporary name (see
    /// ``publish()``). Throws ``RemuxError/Code/destinationExists`` when `destination`
    /// exists and `overwrite` is false.
    public init(destination: String, overwrite: Bool, sources: [InputFile], bufferSize: Int = 1 << 20) throws {
        output = try OutputFile(destination: destination, overwrite: overwrite)
        self.sources = sources
        self.overwrite = overwrite
        buffer = .allocate(byteCount: max(bufferSize, 64 << 10), alignment: 4096)
    }

    deinit {
        buffer.deallocate()
    }

    public func perform(_ operation: MuxOperation) throws {
        switch operation {
        case .write(let bytes):
            try bytes.withUnsafeBytes { try append($0) }
        case let .copy(index, offset, count):
            guard sources.indices.contains(index) else {
                throw RemuxError(.invalidArgument, "copy from source \(index): only \(sources.count) sources given")
            }
            try copy(from: sources[index], at: offset, count: count)
        }
    }

    /// Flushes what is buffered, syncs the file and moves it to its destination: either the
    /// whole file appears there or nothing does. Without a call the temporary file is
    /// removed when the sink goes away.
    public func publish() throws {
        try flush()
        try output.publish(overwrite: overwrite)
    }

    private func append(_ bytes: UnsafeRawBufferPointer) throws {
        if bytes.count >= buffer.count {
            try flush()
            try output.write(bytes)
            return
        }
        if fill + bytes.count > buffer.count { try flush() }
        UnsafeMutableRawBufferPointer(rebasing: buffer[fill...]).copyMemory(from: bytes)
        fill += bytes.count
    }

    private func flush() throws {
        guard fill > 0 else { return }
        try output.write(UnsafeRawBufferPointer(rebasing: buffer[0..<fill]))
        fill = 0
    }

    private func copy(from file: InputFile, at start: UInt64, count: UInt64) throws {
        let (end, overflow) = start.addingReportingOverflow(count)
        guard !overflow, end <= file.length else {
            throw RemuxError(.ioError, "\(file.path): a copy of \(count) bytes at \(start) runs past its end")
        }
        var offset = start
        if kernelCopy, count >= Self.kernelCopyThreshold {
            try flush()
            while offset < end {
                let piece = Int(min(UInt64(buffer.count), end - offset))
                guard let copied = try output.copy(from: file, at: offset, count: piece) else {
                    kernelCopy = false
                    break
                }
                offset += UInt64(copied)
            }
        }
        while offset < end {
            if fill == buffer.count { try flush() }
            let piece = Int(min(UInt64(buffer.count - fill), end - offset))
            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[fill..<(fill + piece)]), at: offset)
            fill += piece
            offset += UInt64(piece)
        }
    }
}
