// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - open(O_RDONLY | O_CLOEXEC | O_NONBLOCK): open(2), which returns at once for a FIFO;
//     fcntl(F_GETFL/F_SETFL) clears O_NONBLOCK again: fcntl(2).
//   - fstat: stat(2); st_mode (mode_t, UInt16) against S_IFMT/S_IFREG, and st_size (off_t,
//     Int64) as on Linux.
//   - pread: pread(2), the same signature (off_t offset), retried on EINTR.
//   - csystem_will_need: fcntl(F_RDADVISE) with a struct radvisory {off_t ra_offset; int
//     ra_count}, fcntl(2); advisory, split into pieces of at most INT_MAX bytes.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem
import ISOBMFF

/// A regular file opened read-only, read with `pread`. Owns its descriptor, so it is a
/// class and not `Sendable`.
public final class InputFile: ByteSource {
    let descriptor: Int32
    /// The path as given, for messages.
    public let path: String
    public let length: UInt64
    let identity: FileIdentity

    /// Opens `path` read-only. Throws ``RemuxError/Code/cannotOpenInput`` when it cannot be
    /// opened or is not a regular file: the parser needs random access and a fixed length,
    /// which a pipe or a device cannot promise; and ``RemuxError/Code/invalidInput`` when it
    /// is empty, which no media file is.
    ///
    /// - Parameters:
    ///   - path: the file to read.
    ///   - name: how to call the file in messages, when not by `path` (a copy of standard
    ///     input is "standard input").
    public init(path: String, name: String? = nil) throws(RemuxError) {
        do {
            let shown = name ?? path
            // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever; it is then
            // refused as not a regular file, and the flag is cleared for a regular one.
            let fd = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
            guard fd >= 0 else {
                throw RemuxError(.cannotOpenInput, "cannot open \(shown): \(errorText(errno))")
            }
            var status = stat()
            guard fstat(fd, &status) == 0 else {
                let code = errno
                close(fd)
                throw RemuxError(.cannotOpenInput, "cannot read \(shown): \(errorText(code))")
            }
            guard status.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw RemuxError(.cannotOpenInput, "\(shown) is \(Destination.describe(status.st_mode & S_IFMT)), "
                                 + "not a regular file")
            }
            guard status.st_size > 0 else {
                close(fd)
                throw RemuxError(.invalidInput, "\(shown) is empty (0 bytes)")
            }
            let flags = fcntl(fd, F_GETFL)
            if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
            descriptor = fd
            self.path = shown
            length = UInt64(status.st_size)
            identity = FileIdentity(status)
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    deinit {
        close(descriptor)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(RemuxError) {
        try bridged {
            var done = 0
            while done < buffer.count {
                guard let position = off_t(exactly: offset + UInt64(done)), let base = buffer.baseAddress else {
                    throw RemuxError(.ioError, "read past the largest file offset in \(path)")
                }
                let count = retryingOnInterrupt { pread(descriptor, base + done, buffer.count - done, position) }
                if count < 0 {
                    throw RemuxError(.ioError, "cannot read \(path) at byte \(position): \(errorText(errno))")
                }
                if count == 0 {
                    throw RemuxError(.ioError, "\(path) ended at byte \(position) while being read: "
                                     + "the file shrank or was replaced")
                }
                done += count
            }
        }
    }

    /// Tells the kernel that `range` will be read soon, so a cold read becomes one
    /// sequential read-ahead instead of many small seeks.
    public func willNeed(_ range: Range<UInt64>) {
        guard let start = off_t(exactly: range.lowerBound), let count = off_t(exactly: range.count) else { return }
        csystem_will_need(descriptor, start, count)
    }

    /// The path, as messages name the file.
    public var name: String { path }

    /// The open file, which the output file copies from in the kernel.
    public var fileDescriptor: Int32? { descriptor }
}
