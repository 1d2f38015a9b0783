// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - write to a descriptor that cannot seek: write(2); EPIPE when the reader has gone
//     (the CLI ignores SIGPIPE, signal(3)), ENOSPC as on Linux.
//   - open(O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600), read, unlink: open(2), read(2),
//     unlink(2). getpid: getpid(2). $TMPDIR as in SpillFile.swift.
//   - csystem_terminal_columns: ioctl(TIOCGWINSZ), tty(4); struct winsize.ws_col.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem
import ISOBMFF

/// A sink that streams to a file descriptor that cannot seek (standard output, a pipe).
///
/// A stream cannot be taken back: the output's layout must be planned before the first
/// byte (extraction does that), and a failure midway leaves a partial file at the reader,
/// which the caller reports with a non-zero exit status.
public struct StreamSink: ByteSink {
    let descriptor: Int32
    /// How to call the stream in messages, such as "standard output".
    public let name: String
    /// Bytes written so far.
    public private(set) var position: UInt64 = 0

    /// A sink writing to `descriptor` (standard output by default), called `name` in messages.
    public init(descriptor: Int32 = 1, name: String = "standard output") {
        self.descriptor = descriptor
        self.name = name
    }

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(RemuxError) {
        try bridged {
            var done = 0
            while done < bytes.count {
                guard let base = bytes.baseAddress else { return }
                let count = retryingOnInterrupt { systemWrite(descriptor, base + done, bytes.count - done) }
                guard count > 0 else {
                    let code = count < 0 ? errno : EIO
                    throw RemuxError(.ioError, "cannot write to \(name) after \(position + UInt64(done)) bytes: "
                                     + errorText(code) + (code == EPIPE ? " (the reader went away)" : ""))
                }
                done += count
            }
            position += UInt64(bytes.count)
        }
    }
}

/// A copy of a stream (standard input, a pipe) in a temporary file, for the parser's
/// random access. The file is registered with ``TemporaryFiles`` from before it exists,
/// so a signal removes it, and ``remove()`` (or deinit) removes it on every other path.
public final class SpooledFile {
    /// Where the copy is.
    public let path: String
    private var slot: Int?
    private var isRemoved = false

    /// Copies everything `descriptor` yields into a new file in `$TMPDIR` (or `/tmp`).
    /// Throws ``RemuxError/Code/ioError`` when reading or writing fails; the partial copy
    /// is removed.
    public init(copying descriptor: Int32, name: String = "standard input") throws(RemuxError) {
        do {
            let directory = temporaryDirectory()
            // Named here rather than by mkstemp so that it is registered before it exists: a
            // signal arriving right after open(2) still finds it.
            let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            path = directory + "/extract-audio-stdin-\(getpid())-\(random).tmp"
            slot = TemporaryFiles.register(path)
            let fd = retryingOnInterrupt { open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
            guard fd >= 0 else {
                let code = errno
                TemporaryFiles.unregister(slot)
                slot = nil
                isRemoved = true
                throw RemuxError(.ioError, "cannot copy \(name) to a temporary file in \(directory): "
                                 + errorText(code))
            }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { bytes in
                    retryingOnInterrupt { read(descriptor, bytes.baseAddress, bytes.count) }
                }
                if count == 0 { break }
                guard count > 0 else {
                    let code = errno
                    remove()
                    throw RemuxError(.ioError, "cannot read \(name): \(errorText(code))")
                }
                var done = 0
                while done < count {
                    let written = buffer.withUnsafeBytes { bytes -> Int in
                        guard let base = bytes.baseAddress else { return -1 }
                        return retryingOnInterrupt { systemWrite(fd, base + done, count - done) }
                    }
                    guard written > 0 else {
                        let code = written < 0 ? errno : ENOSPC
                        remove()
                        throw RemuxError(.ioError, "cannot copy \(name) to \(path): \(errorText(code))")
                    }
                    done += written
                }
            }
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    deinit {
        remove()
    }

    /// Removes the copy (again harmlessly).
    public func remove() {
        guard !isRemoved else { return }
        isRemoved = true
        unlink(path)
        TemporaryFiles.unregister(slot)
        slot = nil
    }
}

/// The width of the terminal on `descriptor` in columns, or nil when it is not a terminal
/// or does not say (`TIOCGWINSZ`).
public func terminalColumns(of descriptor: Int32) -> Int? {
    let columns = csystem_terminal_columns(descriptor)
    return columns > 0 ? Int(columns) : nil
}
