// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - Nothing of the C library beyond the import: reads and writes go through ByteSource
//     and ByteSink. The kernel copy (copy_file_range) is Linux only: on Darwin
//     OutputFile.copy returns nil and this copies through memory.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ISOBMFF

/// The one copy loop from an input to an output, behind every ``CopyingMovieSink``
/// and the writer's file sink (``MovieFileSink``).
///
/// Small ranges (an interleaved file has one per audio chunk, a few hundred bytes each) and
/// bytes built in memory are gathered into one buffer that is written out when full, so the
/// output sees a few large writes; ranges of a MiB or more go from file to file in the
/// kernel (`copy_file_range`) where source and sink are files and the file systems allow
/// it, and through the buffer otherwise.
struct RangeCopier {
    /// Ranges at least this large are copied in the kernel when possible.
    static let kernelCopyThreshold: UInt64 = 1 << 20

    private let buffer: UnsafeMutableRawBufferPointer
    private var fill = 0
    /// Cleared after the kernel refuses once (file systems that cannot), so it is not asked
    /// again for every range.
    private var kernelCopy = true

    /// A copier with a buffer of `bufferSize` bytes (at least 64 KiB, so that any option
    /// value makes progress). Call ``deallocate()`` when done.
    init(bufferSize: Int) {
        buffer = .allocate(byteCount: max(bufferSize, 64 << 10), alignment: 4096)
    }

    /// Frees the buffer; the copier must not be used afterwards.
    func deallocate() {
        buffer.deallocate()
    }

    /// Appends `bytes` to the output, through the buffer unless they fill it anyway.
    mutating func write(_ bytes: UnsafeRawBufferPointer, to sink: inout some ByteSink) throws {
        if bytes.count >= buffer.count {
            try flush(to: &sink)
            try sink.write(bytes)
            return
        }
        if fill + bytes.count > buffer.count { try flush(to: &sink) }
        UnsafeMutableRawBufferPointer(rebasing: buffer[fill...]).copyMemory(from: bytes)
        fill += bytes.count
    }

    /// Copies `range` of `source` to the output.
    ///
    /// - Parameters:
    ///   - isCancelled: polled between kernel copies and whenever the buffer is written out.
    ///   - copied: called with the byte count of each piece copied, and whether the kernel
    ///     copied it (the output then already holds it).
    mutating func copy(_ range: Range<UInt64>, from source: some ByteSource, to sink: inout some ByteSink,
                       isCancelled: () -> Bool, copied: (UInt64, Bool) -> Void) throws {
        var offset = range.lowerBound
        // The kernel copies where the sink can copy from this source (both files: the
        // sink's copy(from:at:count:) capability), else the bytes go through the buffer.
        if kernelCopy, range.upperBound - offset >= Self.kernelCopyThreshold, source.fileDescriptor != nil {
            try flush(to: &sink)
            while offset < range.upperBound {
                if isCancelled() { throw RemuxError.cancelled }
                let count = Int(min(UInt64(buffer.count), range.upperBound - offset))
                guard let done = try sink.copy(from: source, at: offset, count: count) else {
                    kernelCopy = false
                    break
                }
                offset += UInt64(done)
                copied(UInt64(done), true)
            }
        }
        while offset < range.upperBound {
            if fill == buffer.count {
                try flush(to: &sink)
                if isCancelled() { throw RemuxError.cancelled }
            }
            let count = Int(min(UInt64(buffer.count - fill), range.upperBound - offset))
            try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[fill..<(fill + count)]), at: offset)
            fill += count
            offset += UInt64(count)
            copied(UInt64(count), false)
        }
    }

    /// Writes out what the buffer holds.
    mutating func flush(to sink: inout some ByteSink) throws {
        guard fill > 0 else { return }
        try sink.write(UnsafeRawBufferPointer(rebasing: buffer[0..<fill]))
        fill = 0
    }
}
