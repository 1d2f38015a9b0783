// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - open(O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600), then unlink at once: open(2),
//     unlink(2); an unlinked file stays readable through its descriptor on Darwin too.
//   - pread/pwrite: pread(2), pwrite(2), off_t offsets, retried on EINTR.
//   - getpid: getpid(2). $TMPDIR: set for every app (its sandbox's tmp) on iOS, tvOS,
//     watchOS and visionOS, where /tmp, the fallback, is not writable.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ISOBMFF

/// A temporary file that holds sample bytes until a `MovieWriter` writes the movie: the
/// store of `MovieWriter.append(_:duration:compositionOffset:isSync:descriptionIndex:to:spillingTo:asSource:)`,
/// so that samples made in memory (an encoder's output, a generated track) cost the writer
/// only their table entries, however many there are.
///
/// It is a `ByteSink` (appended to as samples come) and a `ByteSource` (read back by the
/// sink; give it to ``MovieFileSink`` among its sources at the number the writer was given).
/// The file is removed from its directory as soon as it is created, so it never outlives
/// the process, however that ends; its space is freed when the last reference goes.
///
/// ```swift
/// let spill = try SpillFile()
/// var store = spill
/// try writer.append(frame, duration: 1024, to: track, spillingTo: &store, asSource: 0)
/// let sink = try MovieFileSink(destination: "out.m4a", overwrite: false, sources: [spill])
/// ```
public final class SpillFile: ByteSink, ByteSource {
    private let descriptor: Int32
    /// The bytes appended so far: what can be read back.
    public private(set) var length: UInt64 = 0

    /// Creates the file in `directory` (by default `$TMPDIR`, or `/tmp`) and removes its
    /// name at once. Throws ``RemuxError/Code/ioError`` when it cannot be created.
    public init(directory: String? = nil) throws(RemuxError) {
        do {
            let directory = directory ?? temporaryDirectory()
            let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let path = directory + "/.extract-audio-spill-\(getpid())-\(random).tmp"
            // Registered before it exists, so that a signal arriving right after open(2) still
            // finds it; it is unlinked at once after.
            let slot = TemporaryFiles.register(path)
            defer { TemporaryFiles.unregister(slot) }
            let fd = retryingOnInterrupt { open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
            guard fd >= 0 else {
                throw RemuxError(.ioError, "cannot create a temporary file in \(directory): \(errorText(errno))")
            }
            unlink(path)
            descriptor = fd
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    deinit {
        close(descriptor)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(RemuxError) {
        try bridged {
            guard let base = bytes.baseAddress else { return }  // Nothing to write.
            var done = 0
            while done < bytes.count {
                guard let position = off_t(exactly: length + UInt64(done)) else {
                    throw RemuxError(.ioError, "the temporary sample file would pass the largest file offset")
                }
                let count = retryingOnInterrupt { pwrite(descriptor, base + done, bytes.count - done, position) }
                guard count > 0 else {
                    let code = count < 0 ? errno : ENOSPC
                    throw RemuxError(.ioError, "cannot write the temporary sample file: \(errorText(code))")
                }
                done += count
            }
            length += UInt64(bytes.count)
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(RemuxError) {
        try bridged {
            let (end, overflow) = offset.addingReportingOverflow(UInt64(buffer.count))
            guard !overflow, end <= length else {
                throw RemuxError(.ioError, "a read of \(buffer.count) bytes at \(offset) runs past the \(length) bytes of "
                                 + "the temporary sample file")
            }
            guard let base = buffer.baseAddress else { return }  // Nothing to read.
            var done = 0
            while done < buffer.count {
                guard let position = off_t(exactly: offset + UInt64(done)) else {
                    throw RemuxError(.ioError, "a read of the temporary sample file at \(offset) passes the largest file offset")
                }
                let count = retryingOnInterrupt { pread(descriptor, base + done, buffer.count - done, position) }
                guard count > 0 else {
                    throw RemuxError(.ioError, "cannot read the temporary sample file at byte \(position): "
                                     + errorText(count < 0 ? errno : EIO))
                }
                done += count
            }
        }
    }

    /// "the temporary sample file", as messages name it.
    public var name: String { "the temporary sample file" }

    /// The open file, which an output file copies from in the kernel.
    public var fileDescriptor: Int32? { descriptor }
}
