// The tag writer's system calls (the only file I/O of tags outside the shared sinks):
// checked against the manual pages for Darwin as for glibc —
//   - access(2), stat(2): W_OK and st_mode exist alike; root passes access(2), so the mode
//     bits are read too.
//   - open(2) O_WRONLY | O_CLOEXEC, pwrite(2), close(2): POSIX, the same on Darwin.
//   - csystem_full_sync (CSystem): fcntl(F_FULLFSYNC) on Darwin, whose fsync(2) does not
//     flush the drive's cache; fsync(2) elsewhere (see OutputFile.swift).
//   - chmod(2): the rewritten file gets the original's permission bits (st_mode & 07777).
//   - realpath(3) with a NULL buffer: allocates on glibc, musl and Darwin; freed with free(3).
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

extension TagFile {
    /// Refuses a file that is read-only, or in a read-only folder (the rewrite creates a file
    /// beside it): by access(2), and by the mode bits, which root's access(2) ignores but a
    /// user who made a file read-only means.
    static func checkWritable(_ target: String, shown: String) throws {
        let folder = directoryName(of: target)
        for (path, what) in [(target, "the file"), (folder, "its folder \(folder)")] {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            if access(path, W_OK) != 0 || status.st_mode & 0o222 == 0 {
                throw RemuxError(.cannotCreateOutput, "cannot write \(shown): \(what) is read-only (left as it was)")
            }
        }
    }

    /// The in-place writes, each followed by a sync (`F_FULLFSYNC` on Darwin).
    static func writeInPlace(_ writes: [(offset: UInt64, bytes: [UInt8])], to target: String, shown: String,
                             stop: Int?) throws {
        let fd = retryingOnInterrupt { open(target, O_WRONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw RemuxError(.cannotCreateOutput, "cannot write \(shown): \(errorText(errno))") }
        defer { close(fd) }
        for (n, write) in writes.enumerated() {
            guard let offset = off_t(exactly: write.offset) else {
                throw RemuxError(.ioError, "cannot write \(shown) at byte \(write.offset)")
            }
            let written = write.bytes.withUnsafeBytes { buffer in
                retryingOnInterrupt { pwrite(fd, buffer.baseAddress, buffer.count, offset) }
            }
            guard written == write.bytes.count else {
                let code = written < 0 ? errno : ENOSPC
                throw RemuxError(.ioError, "cannot write \(shown): \(errorText(code)) (stopped after \(n) of "
                                 + "\(writes.count) in-place steps; the file has its old tags)")
            }
            guard csystem_full_sync(fd) == 0 else {
                throw RemuxError(.ioError, "cannot sync \(shown): \(errorText(errno))")
            }
            if let stop, n + 1 == stop { throw InjectedStop() }
        }
    }

    /// The path with symbolic links resolved, so that the file they point to is edited and
    /// the links stay links.
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The permission bits of `path` (0o644 when it cannot be read).
    static func permissions(of path: String) -> mode_t {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0o644
    }

    /// Gives `path` the permission bits `mode` (best effort: the file is already published).
    static func setPermissions(_ mode: mode_t, of path: String) {
        _ = chmod(path, mode)
    }
}
