// The tag writer's system calls (the only file I/O of tags outside the shared sinks):
// checked against the manual pages for Darwin as for glibc —
//   - access(2), stat(2): W_OK and st_mode exist alike; root passes access(2), so the mode
//     bits are read too.
//   - open(2) O_WRONLY | O_CLOEXEC, pwrite(2), close(2): POSIX, the same on Darwin.
//   - csystem_full_sync (CSystem): fcntl(F_FULLFSYNC) on Darwin, whose fsync(2) does not
//     flush the drive's cache; fsync(2) elsewhere (see OutputFile.swift).
//   - flock(2) LOCK_EX | LOCK_NB, EWOULDBLOCK: the same on Darwin (flock(2)); fstat(2)'s
//     st_mtim is st_mtimespec there.
//   - fchmod(2), fchown(2) (OutputFile.swift): the rewrite's copy gets the original's
//     permission bits, owner and group before any byte is written; csystem_copy_xattrs
//     (CSystem) its extended attributes.
//   - realpath(3) with a NULL buffer: allocates on glibc, musl and Darwin; freed with free(3).
//   - opendir(3), readdir(3), closedir(3), lstat(2), kill(2) with signal 0 and ESRCH, unlink(2):
//     POSIX; dirent's d_name is a fixed array on glibc and Darwin alike.
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

    /// Removes the temporary files (`.NAME.extract-audio-PID-RANDOM.tmp`, see `OutputFile`)
    /// that an edit of `target` killed before it could clean up left beside it: those whose
    /// process is gone (kill(2) says ESRCH), regular files of this user. Returns one warning
    /// for each. Called with the file's lock held, so no live edit of it is writing one.
    static func removeStaleTemporaries(of target: String) -> [String] {
        let folder = directoryName(of: target)
        let name = baseName(of: target)
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var warnings: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            guard let pid = OutputFile.writerOfTemporary(entryName, for: name) else { continue }
            let path = (folder == "." ? "" : folder + "/") + entryName
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                  status.st_uid == geteuid() || geteuid() == 0 else { continue }
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }  // Its writer may be running.
            if unlink(path) == 0 {
                warnings.append("removed \(path), a temporary file left by an interrupted edit (process \(pid) is gone)")
            }
        }
        return warnings
    }

    /// Takes the edit's lock on the file `input` has open (`flock(2)`, held until `input` is
    /// closed) and says what the file is, so that the edit can tell later that it is still the
    /// one it read. Another edit holding the lock, or the path naming another file by now:
    /// ``RemuxError/Code/fileBusy``, and nothing is written.
    static func lockForEditing(_ input: InputFile, at target: String, shown: String) throws -> EditedFile {
        guard flock(input.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            if code == EWOULDBLOCK || code == EAGAIN {
                throw RemuxError(.fileBusy, "\(shown) is being edited by another run (it holds the file's lock); "
                                 + "it was left as it was: try again when that one has finished")
            }
            throw RemuxError(.ioError, "cannot lock \(shown) for editing: \(errorText(code)) (left as it was)")
        }
        var status = stat()
        guard fstat(input.descriptor, &status) == 0 else {
            throw RemuxError(.ioError, "cannot read \(shown): \(errorText(errno))")
        }
        let file = EditedFile(status, descriptor: input.descriptor)
        try checkUnchanged(file, at: target, shown: shown)
        return file
    }

    /// Throws ``RemuxError/Code/fileBusy`` unless `target` is still the file that was read:
    /// the same device and inode, size and modification time.
    static func checkUnchanged(_ file: EditedFile, at target: String, shown: String) throws {
        var status = stat()
        guard stat(target, &status) == 0, EditedFile(status).isSameVersion(as: file) else {
            throw RemuxError(.fileBusy, "\(shown) was replaced or changed while it was being edited (by another "
                             + "program?): this edit was not written; try again")
        }
    }

    /// The in-place writes, each followed by a sync (`F_FULLFSYNC` on Darwin), through a
    /// descriptor checked to be the file that was read and locked.
    ///
    /// `commit` is the write after which the new tags are the file's (the old `moov` turned
    /// `free`). Until it is done, the bytes each write replaces are kept: a failed write or
    /// sync puts them back, so a failure leaves the file as it was, byte for byte
    /// (``RemuxError/Code/ioError``). A failure after it (clearing the old bytes) leaves the
    /// edit complete and is returned as a warning.
    static func writeInPlace(_ writes: [(offset: UInt64, bytes: [UInt8])], commit: Int, to target: String,
                             shown: String, file: EditedFile, stop: Int?) throws -> [String] {
        // O_NONBLOCK: a FIFO put at the path meanwhile must not block the edit (fstat below
        // refuses it as another file); a regular file ignores the flag.
        let fd = retryingOnInterrupt { open(target, O_RDWR | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw RemuxError(.cannotCreateOutput, "cannot write \(shown): \(errorText(errno))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, EditedFile(status).isSameVersion(as: file) else {
            throw RemuxError(.fileBusy, "\(shown) was replaced or changed while it was being edited (by another "
                             + "program?): this edit was not written; try again")
        }
        func put(_ bytes: [UInt8], at offset: UInt64) -> Int32? {
            guard let position = off_t(exactly: offset) else { return EOVERFLOW }
            let written = bytes.withUnsafeBytes { buffer in
                retryingOnInterrupt { pwrite(fd, buffer.baseAddress, buffer.count, position) }
            }
            guard written == bytes.count else { return written < 0 ? errno : ENOSPC }
            return csystem_full_sync(fd) == 0 ? nil : errno
        }
        // What the writes up to the commit replace (inside the old padding and moov: the
        // moov's size bounds it).
        var saved: [[UInt8]] = []
        for write in writes.prefix(commit + 1) {
            var old = [UInt8](repeating: 0, count: write.bytes.count)
            let read = old.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { pread(fd, buffer.baseAddress, buffer.count, off_t(clamping: write.offset)) }
            }
            guard read == old.count else {
                throw RemuxError(.ioError, "cannot read \(shown): \(errorText(read < 0 ? errno : EIO)) (left as it was)")
            }
            saved.append(old)
        }
        var warnings: [String] = []
        for (n, write) in writes.enumerated() {
            if let code = put(write.bytes, at: write.offset) {
                guard n <= commit else {
                    warnings.append("the old tags' bytes could not be cleared (\(errorText(code))): the new tags are "
                                    + "written, the old ones are left inside padding no reader uses")
                    break
                }
                // Back to the original, newest first.
                var restored = true
                for k in stride(from: n, through: 0, by: -1) where put(saved[k], at: writes[k].offset) != nil {
                    restored = false
                }
                throw RemuxError(.ioError, "cannot write \(shown): \(errorText(code)) " + (restored
                    ? "(the in-place edit was undone: the file is as it was)"
                    : "(undoing the in-place edit failed too: the file may open with its old tags or the new ones)"))
            }
            if let stop, n + 1 == stop { throw InjectedStop() }
        }
        // The writes went to the file that was read (this descriptor); if another program
        // put a new file at the path meanwhile, the edit went with the replaced one.
        var now = stat()
        guard stat(target, &now) == 0, FileIdentity(now) == FileIdentity(status) else {
            throw RemuxError(.fileBusy, "\(shown) was replaced by another file while it was being edited (by another "
                             + "program?): the edit went to the file it replaced, and the new one was left as it is; "
                             + "try again")
        }
        return warnings
    }

    /// The path with symbolic links resolved, so that the file they point to is edited and
    /// the links stay links.
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// What an edited file is: which file (device, inode), which version of it (size,
/// modification time), and what a rewrite must keep (mode, owner, group, links, extended
/// attributes).
struct EditedFile: Equatable {
    var identity: FileIdentity
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int
    var mode: mode_t
    var owner: uid_t
    var group: gid_t
    var links: UInt64
    /// The descriptor the edit read it through (its extended attributes are copied from
    /// it); -1 for none.
    var descriptor: Int32 = -1

    init(_ status: stat, descriptor: Int32 = -1) {
        self.descriptor = descriptor
        identity = FileIdentity(status)
        size = Int64(status.st_size)
        #if canImport(Darwin)
        modifiedSeconds = Int(status.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int(status.st_mtimespec.tv_nsec)
        #else
        modifiedSeconds = Int(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int(status.st_mtim.tv_nsec)
        #endif
        mode = status.st_mode & 0o7777
        owner = status.st_uid
        group = status.st_gid
        links = UInt64(status.st_nlink)
    }

    /// The same file, not written since.
    func isSameVersion(as other: EditedFile) -> Bool {
        identity == other.identity && size == other.size && modifiedSeconds == other.modifiedSeconds
            && modifiedNanoseconds == other.modifiedNanoseconds
    }
}
