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
import ISOBMFF

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
    ///
    /// Memory stays that of one buffer whatever the covers' and the padding's sizes: pieces
    /// are written through a 1 MiB buffer (streamed images read from `images` into it), and
    /// the kept bytes leave out runs of zeros, which is all of a padding this tool wrote.
    static func writeInPlace(_ writes: [(offset: UInt64, pieces: [TagRewritePlan.Piece])], commit: Int,
                             to target: String, shown: String, file: EditedFile, images: [ImageSource] = [],
                             stop: Int?) throws -> [String] {
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
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        func pwriteAll(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Int32? {
            guard let position = off_t(exactly: offset) else { return EOVERFLOW }
            let written = retryingOnInterrupt { pwrite(fd, bytes.baseAddress, bytes.count, position) }
            guard written == bytes.count else { return written < 0 ? errno : ENOSPC }
            return nil
        }
        /// Writes `pieces` from `offset` on, then syncs; the error number of a failure.
        func put(_ pieces: [TagRewritePlan.Piece], at offset: UInt64) -> Int32? {
            var at = offset
            for piece in pieces {
                switch piece {
                case .write(let bytes):
                    if let code = bytes.withUnsafeBytes({ pwriteAll($0, at: at) }) { return code }
                case .zeros(let count):
                    var left = count
                    while left > 0 {
                        let part = Int(min(left, UInt64(TagFile.zeros.count)))
                        if let code = TagFile.zeros.withUnsafeBytes({ pwriteAll(UnsafeRawBufferPointer(rebasing: $0[..<part]),
                                                                                at: at + count - left) }) {
                            return code
                        }
                        left -= UInt64(part)
                    }
                case .image(let index, let count):
                    guard index < images.count else { return EINVAL }
                    var done: UInt64 = 0
                    while done < count {
                        let part = Int(min(count - done, UInt64(chunk)))
                        let failed: Int32? = buffer.withUnsafeMutableBytes { raw in
                            let slice = UnsafeMutableRawBufferPointer(rebasing: raw[..<part])
                            do { try images[index].file.read(into: slice, at: images[index].offset + done) } catch {
                                return EIO
                            }
                            return pwriteAll(UnsafeRawBufferPointer(slice), at: at + done)
                        }
                        if let failed { return failed }
                        done += UInt64(part)
                    }
                case .copy, .shift:
                    return EINVAL  // Not in an in-place edit (TagRewritePlan.inPlaceEdit).
                }
                at += piece.byteCount
            }
            return csystem_full_sync(fd) == 0 ? nil : errno
        }
        // What the writes up to the commit replace (inside the old padding and moov), in
        // pieces of the buffer's size; a piece of zeros kept as its count.
        var saved: [[TagRewritePlan.Piece]] = []
        for write in writes.prefix(commit + 1) {
            let total = write.pieces.reduce(UInt64(0)) { $0 + $1.byteCount }
            var old: [TagRewritePlan.Piece] = []
            var done: UInt64 = 0
            while done < total {
                let part = Int(min(total - done, UInt64(chunk)))
                let read = buffer.withUnsafeMutableBytes { raw in
                    retryingOnInterrupt { pread(fd, raw.baseAddress, part, off_t(clamping: write.offset + done)) }
                }
                guard read == part else {
                    throw RemuxError(.ioError, "cannot read \(shown): \(errorText(read < 0 ? errno : EIO)) "
                                     + "(left as it was)")
                }
                if buffer[..<part].allSatisfy({ $0 == 0 }) {
                    if case .zeros(let count)? = old.last { old[old.count - 1] = .zeros(count + UInt64(part)) }
                    else { old.append(.zeros(UInt64(part))) }
                } else {
                    old.append(.write(Array(buffer[..<part])))
                }
                done += UInt64(part)
            }
            saved.append(old)
        }
        var warnings: [String] = []
        for (n, write) in writes.enumerated() {
            if let code = put(write.pieces, at: write.offset) {
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

    /// The rewrite of a file with hard links, which a rename would split from its other
    /// names: the new file is written beside it and synced, renamed to a name that says it
    /// is complete (``OutputFile/readyCopyName(for:inode:length:)``), and copied back over
    /// the file in place (then cut to its length and synced), keeping its inode. A failure
    /// before the copy back starts leaves the file as it was; one during it leaves the
    /// complete new version under that name, and the next `tag` run on the file copies it
    /// first (roll-forward: ``finishInterruptedCopy(of:shown:)``), as it does after a kill.
    static func rewriteKeepingLinks(_ input: InputFile, plan: TagRewritePlan, to target: String, shown: String,
                                    keeping file: EditedFile, images: [ImageSource]) throws {
        let sink = try MovieFileSink(destination: target, overwrite: true, sources: [input] + images.map(\.file),
                                     keeping: file)
        try write(plan, from: input, to: sink, images: images, shown: shown)
        let length = plan.pieces.reduce(UInt64(0)) { $0 + $1.byteCount }
        let folder = directoryName(of: target)
        let ready = (folder == "." && !target.hasPrefix("./") ? "" : folder + "/")
            + OutputFile.readyCopyName(for: baseName(of: target), inode: file.identity.inode, length: length)
        try checkUnchanged(file, at: target, shown: shown)
        try sink.finish(asReadyCopy: ready)
        let fd = retryingOnInterrupt { open(target, O_RDWR | O_CLOEXEC | O_NONBLOCK) }
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0, EditedFile(status).isSameVersion(as: file) else {
            if fd >= 0 { close(fd) }
            unlink(ready)
            throw RemuxError(.fileBusy, "\(shown) was replaced or changed while it was being edited (by another "
                             + "program?): this edit was not written; try again")
        }
        defer { close(fd) }
        if let failure = copyBack(from: ready, length: length, into: fd) {
            guard failure.wrote else {
                unlink(ready)
                throw RemuxError(.ioError, "cannot write \(shown): \(errorText(failure.code)) (left as it was)")
            }
            throw RemuxError(.ioError, "cannot write \(shown): \(errorText(failure.code)) while copying its new "
                             + "version back: the file is part old, part new; the complete new version is kept at "
                             + "\(ready), and the next tag run on \(shown) copies it first")
        }
        unlink(ready)
        syncFolder(of: target)
    }

    /// Copies the complete new file at `readyPath` (`length` bytes) over the file open as
    /// `fd`, through a buffer of 1 MiB, then cuts it to `length` and syncs it: the rewrite of
    /// a file with hard links, which keeps its inode and so all its names. Returns nil, or
    /// the error number of a failure and whether any byte of the file had been written.
    static func copyBack(from readyPath: String, length: UInt64, into fd: Int32) -> (code: Int32, wrote: Bool)? {
        let source = retryingOnInterrupt { open(readyPath, O_RDONLY | O_CLOEXEC) }
        guard source >= 0 else { return (errno, false) }
        defer { close(source) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: UInt64 = 0
        while done < length {
            let part = Int(min(length - done, UInt64(buffer.count)))
            guard let position = off_t(exactly: done) else { return (EOVERFLOW, done > 0) }
            let failure: Int32? = buffer.withUnsafeMutableBytes { raw in
                let read = retryingOnInterrupt { pread(source, raw.baseAddress, part, position) }
                guard read == part else { return read < 0 ? errno : EIO }
                let written = retryingOnInterrupt { pwrite(fd, raw.baseAddress, part, position) }
                guard written == part else { return written < 0 ? errno : ENOSPC }
                return nil
            }
            if let failure { return (failure, done > 0) }
            done += UInt64(part)
        }
        guard let end = off_t(exactly: length), ftruncate(fd, end) == 0 else { return (errno, true) }
        return csystem_full_sync(fd) == 0 ? nil : (errno, true)
    }

    /// Finishes an edit of `target` that was killed, or failed, while copying its complete
    /// new version back (``rewriteKeepingLinks``): a ``OutputFile/readyCopyName(for:inode:length:)``
    /// beside it, for its inode and of the length it names, is copied over it before
    /// anything else is done. Returns what it did, as warnings. A ready copy for another
    /// file (the name now holds a different one) is left where it is, with a warning.
    static func finishInterruptedCopy(of target: String, shown: String) throws -> [String] {
        let folder = directoryName(of: target)
        let name = baseName(of: target)
        guard let current = FileIdentity(path: target), let directory = opendir(folder) else { return [] }
        var found: [(path: String, inode: UInt64, length: UInt64)] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            guard let (inode, length) = OutputFile.readyCopy(entryName, for: name) else { continue }
            found.append(((folder == "." ? "" : folder + "/") + entryName, inode, length))
        }
        closedir(directory)
        var warnings: [String] = []
        for copy in found {
            var status = stat()
            guard lstat(copy.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                  status.st_uid == geteuid() || geteuid() == 0 else { continue }
            guard copy.inode == current.inode else {
                warnings.append("left \(copy.path): the complete new version of an interrupted edit of a file that "
                                + "is no longer at this name")
                continue
            }
            guard UInt64(status.st_size) == copy.length else {
                throw RemuxError(.ioError, "\(copy.path), the new version of an interrupted edit of \(shown), has "
                                 + "\(status.st_size) bytes, not the \(copy.length) it was written with: it was not "
                                 + "copied; both were left as they are")
            }
            let fd = retryingOnInterrupt { open(target, O_RDWR | O_CLOEXEC | O_NONBLOCK) }
            guard fd >= 0 else {
                throw RemuxError(.cannotCreateOutput, "cannot finish the interrupted edit of \(shown): "
                                 + "\(errorText(errno))")
            }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                throw RemuxError(.fileBusy, "\(shown) is being edited by another run (it holds the file's lock); "
                                 + "it was left as it was: try again when that one has finished")
            }
            var opened = stat()
            guard fstat(fd, &opened) == 0, FileIdentity(opened) == current else {
                throw RemuxError(.fileBusy, "\(shown) was replaced while it was being opened: try again")
            }
            if let failure = copyBack(from: copy.path, length: copy.length, into: fd) {
                throw RemuxError(.ioError, "cannot finish the interrupted edit of \(shown): "
                                 + "\(errorText(failure.code)); its complete new version is still at \(copy.path), "
                                 + "and the next tag run on it tries again")
            }
            unlink(copy.path)
            syncFolder(of: target)
            warnings.append("finished an interrupted edit: copied its complete new version from \(copy.path) over "
                            + "the file (its hard links kept)")
        }
        return warnings
    }

    /// Syncs the folder of `path` where it can (an unlink's durability: nothing to report).
    static func syncFolder(of path: String) {
        let fd = open(directoryName(of: path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = csystem_full_sync(fd)
        close(fd)
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
