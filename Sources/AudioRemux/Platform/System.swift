// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - getenv("TMPDIR"): getenv(3); set for every app on Apple systems (confstr(3),
//     _CS_DARWIN_USER_TEMP_DIR, is what it holds).
//   - strerror: strerror(3); returns an implicitly unwrapped pointer on Darwin too.
//   - errno and EINTR: intro(2); errno is the overlay's thread-local accessor.
//   - stat, st_dev (dev_t, Int32 on Darwin), st_ino (ino_t, UInt64 with 64-bit inodes):
//     stat(2); both widened with truncatingIfNeeded, for comparison only.
//   - write: write(2).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of an `errno` value, such as "No space left on device".
func errorText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// Calls `body` again while it fails with EINTR.
func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// Where temporary files go: `$TMPDIR`, or `/tmp` when it is unset or empty, without a
/// trailing slash.
func temporaryDirectory() -> String {
    var directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    if directory.isEmpty { directory = "/tmp" }
    while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
    return directory
}

/// The directory part of a path ("." when it has none).
func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let directory = path[..<slash]
    return directory.isEmpty ? "/" : String(directory)
}

/// The last component of a path.
func baseName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

/// Identity of a file on disk, to tell whether two paths name the same file.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(_ status: stat) {
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(truncatingIfNeeded: status.st_ino)
    }

    /// The identity of the file at `path`, or nil when there is none.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// `write(2)`, under a name that methods called `write` do not shadow.
func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
