// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - open(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644): open(2); the same flags and
//     EEXIST on Darwin (O_CLOEXEC since macOS 10.7).
//   - csystem_rename_noreplace: renamex_np(RENAME_EXCL), rename(2); EEXIST when the
//     destination exists, ENOTSUP where the file system cannot (EOPNOTSUPP is a different
//     value on Darwin, hence both are tested before falling back to link + unlink).
//   - link, unlink, rename: link(2), unlink(2), rename(2); rename replaces a symbolic link
//     itself, never its target, as on Linux.
//   - csystem_full_sync: fcntl(F_FULLFSYNC), fcntl(2) and fsync(2): Darwin's fsync does not
//     flush the drive's cache; F_FULLFSYNC does (fsync where unsupported). The directory is
//     flushed the same way after the rename.
//   - csystem_copy_file_range: ENOSYS on Darwin (no copy_file_range); the caller copies
//     through memory. csystem_start_writeback: nothing on Darwin (no sync_file_range).
//   - lstat/stat and st_mode & S_IFMT: stat(2); st_mode is a UInt16 mode_t on Darwin, and
//     S_IFMT, S_IFREG, S_IFLNK… are mode_t there too, so the comparisons type-check as is.
//   - errno values ENOSPC, EFBIG, EIO, EDQUOT: intro(2), all defined on Darwin.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem
import ISOBMFF

/// A new file written beside its destination under a temporary name, then published
/// atomically: either the complete file appears at the destination, or nothing does.
///
/// The temporary name is `.NAME.extract-audio-PID-RANDOM.tmp`, hidden and recognisable, so a
/// file left by a killed process is easy to spot and never mistaken for output.
final class OutputFile: ByteSink {
    let destination: String
    let temporaryPath: String
    private var descriptor: Int32
    private var slot: Int?
    private var isFinished = false
    /// Bytes written so far.
    private(set) var position: UInt64 = 0
    /// Bytes whose writeback has been started (``startWritebackIfDue()``).
    private var writebackStarted: UInt64 = 0
    /// Writeback is started every this many bytes: the final flush then waits for the
    /// last few megabytes rather than for the whole file (issue 15: it was most of the time
    /// left on long outputs), and dirty pages never pile up.
    static let writebackInterval: UInt64 = 8 << 20

    /// Creates the temporary file. Fails with `.destinationExists` if `destination` exists
    /// and `overwrite` is false (checked again, atomically, when publishing), and with
    /// `.cannotCreateOutput` if it is anything but a regular file or a link to one.
    init(destination: String, overwrite: Bool, keeping original: EditedFile? = nil) throws {
        try Destination.check(destination, overwrite: overwrite)
        let directory = directoryName(of: destination)
        let path = (directory == "." && !destination.hasPrefix("./") ? "" : directory + "/")
            + Self.temporaryName(for: baseName(of: destination))
        // Registered before it exists, so that a signal arriving right after open(2) still
        // finds it; removing a file not yet created is harmless.
        let slot = TemporaryFiles.register(path)
        // A rewritten file's copy is created with no more than its permissions (the umask may
        // take some away; fchmod gives them back exactly), before any byte is written.
        let fd = retryingOnInterrupt {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, original.map { $0.mode & 0o777 } ?? 0o644)
        }
        guard fd >= 0 else {
            let code = errno
            TemporaryFiles.unregister(slot)
            var status = stat()
            let reason = stat(directory, &status) != 0 ? "the directory \(directory) does not exist"
                : "cannot create a file in \(directory): \(errorText(code))"
            throw RemuxError(.cannotCreateOutput, "cannot write \(destination): \(reason)")
        }
        self.destination = destination
        temporaryPath = path
        descriptor = fd
        self.slot = slot
        if let original {
            // Owner and group first (a chown clears set-id bits), then the exact mode.
            if geteuid() == 0 || original.owner == geteuid() { _ = fchown(fd, original.owner, original.group) }
            guard fchmod(fd, original.mode) == 0 else {
                let code = errno
                discard()
                throw RemuxError(.cannotCreateOutput, "cannot give the copy of \(destination) its permissions: "
                                 + "\(errorText(code)) (left as it was)")
            }
            // Extended attributes (a Finder tag, an ACL, a quarantine flag), where the process
            // may write them: a namespace it may not is left out, as cp -a does.
            if original.descriptor >= 0 { _ = csystem_copy_xattrs(original.descriptor, fd) }
        }
    }

    deinit {
        discard()
    }

    /// `.NAME.extract-audio-PID-RANDOM.tmp`, with NAME shortened (at a character boundary)
    /// so that the whole name fits `NAME_MAX` (255 bytes) however long the destination's
    /// name is: a name that fits the file system as a destination must fit as a temporary.
    static func temporaryName(for name: String) -> String {
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return hiddenName(for: name, suffix: "\(temporaryMarker)\(getpid())-\(random).tmp")
    }

    /// `.NAME` + `suffix`, NAME shortened at a character boundary so that the whole fits
    /// `NAME_MAX` (255 bytes): the one rule of the temporary and ready-copy names.
    private static func hiddenName(for name: String, suffix: String) -> String {
        let budget = 255 - 1 - suffix.utf8.count  // The leading dot, then the suffix.
        var kept = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= budget else { break }
            kept.append(character)
            bytes += size
        }
        return "." + kept + suffix
    }

    static let temporaryMarker = ".extract-audio-"

    /// The process that wrote `entry`, when it is a ``temporaryName(for:)`` of a file named
    /// `name` (the whole name, or the prefix of it that was kept to fit NAME_MAX); else nil.
    static func writerOfTemporary(_ entry: String, for name: String) -> Int32? {
        let bytes = Array(entry.utf8)
        let marker = Array(temporaryMarker.utf8)
        guard bytes.first == UInt8(ascii: "."), entry.hasSuffix(".tmp"), bytes.count > marker.count + 5,
              let at = (1...(bytes.count - marker.count - 4)).last(where: {
                  bytes[$0..<($0 + marker.count)].elementsEqual(marker)
              }) else { return nil }
        let kept = bytes[1..<at]
        let nameBytes = Array(name.utf8)
        // Shortened only when the whole name would not fit: then the entry is about 255 bytes.
        guard kept.elementsEqual(nameBytes) || (!kept.isEmpty && nameBytes.starts(with: kept) && bytes.count >= 251)
        else { return nil }
        let fields = bytes[(at + marker.count)..<(bytes.count - 4)].split(separator: UInt8(ascii: "-"))
        guard fields.count == 2, let pid = Int32(String(decoding: fields[0], as: UTF8.self)), pid > 0 else { return nil }
        return pid
    }

    /// `.NAME.extract-audio-copy-INODE-LENGTH.tmp`: the complete rewrite of the file `NAME`
    /// (inode `inode`) of `length` bytes, synced, waiting to be copied back over it (a file
    /// with hard links, whose names a rename would split). Only a complete copy ever has
    /// this name (it is renamed to it after its sync), so the next `tag` run that finds it
    /// beside that file finishes the copy (``readyCopy(_:for:)``).
    static func readyCopyName(for name: String, inode: UInt64, length: UInt64) -> String {
        hiddenName(for: name, suffix: "\(temporaryMarker)copy-\(inode)-\(length).tmp")
    }

    /// The inode and length a ``readyCopyName(for:inode:length:)`` of a file named `name`
    /// records; nil for any other entry.
    static func readyCopy(_ entry: String, for name: String) -> (inode: UInt64, length: UInt64)? {
        let bytes = Array(entry.utf8)
        let marker = Array("\(temporaryMarker)copy-".utf8)
        guard entry.hasSuffix(".tmp"), bytes.count > marker.count + 4,
              let at = (0...(bytes.count - marker.count - 4)).last(where: {
                  bytes[$0..<($0 + marker.count)].elementsEqual(marker)
              }) else { return nil }
        let fields = bytes[(at + marker.count)..<(bytes.count - 4)].split(separator: UInt8(ascii: "-"))
        guard fields.count == 2, let inode = UInt64(String(decoding: fields[0], as: UTF8.self)),
              let length = UInt64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        let expected = readyCopyName(for: name, inode: inode, length: length)
        return expected == entry ? (inode, length) : nil
    }

    /// Flushes the file to disk, closes it and renames it to `readyPath` (a
    /// ``readyCopyName(for:inode:length:)``), then syncs the folder: from then on the copy
    /// is complete on disk under a name the next run recognises. Any failure removes it.
    func finish(asReadyCopy readyPath: String) throws {
        guard csystem_full_sync(descriptor) == 0 else {
            throw RemuxError(.ioError, "cannot flush the copy of \(destination) to disk: \(errorText(errno)) "
                             + "(left as it was)")
        }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else {
            throw RemuxError(.ioError, "cannot write the copy of \(destination): \(errorText(errno)) (left as it was)")
        }
        guard rename(temporaryPath, readyPath) == 0 else {
            throw RemuxError(.ioError, "cannot rename the copy of \(destination): \(errorText(errno)) "
                             + "(left as it was)")
        }
        isFinished = true
        TemporaryFiles.unregister(slot)
        slot = nil
        let folder = open(directoryName(of: destination), O_RDONLY | O_CLOEXEC)
        let synced = folder >= 0 && (csystem_full_sync(folder) == 0 || errno == EINVAL || errno == ENOTSUP)
        let code = errno
        if folder >= 0 { close(folder) }
        guard synced else {
            unlink(readyPath)
            throw RemuxError(.ioError, "cannot sync the folder of \(destination): \(errorText(code)) (left as it was)")
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { return }
            let count = retryingOnInterrupt { systemWrite(descriptor, base + done, bytes.count - done) }
            guard count > 0 else {
                let code = count < 0 ? errno : ENOSPC
                throw RemuxError(.ioError, "cannot write \(destination): \(errorText(code))")
            }
            done += count
        }
        position += UInt64(bytes.count)
        startWritebackIfDue()
    }

    /// Starts writing back what was written since the last call, once it is
    /// ``writebackInterval`` or more (advisory; the flush in ``publish(overwrite:)`` still
    /// makes the file durable and reports errors).
    private func startWritebackIfDue() {
        guard position - writebackStarted >= Self.writebackInterval,
              let offset = off_t(exactly: writebackStarted), let length = off_t(exactly: position - writebackStarted)
        else { return }
        csystem_start_writeback(descriptor, offset, length)
        writebackStarted = position
    }

    /// Copies `count` bytes of `input` at `offset` to the end of this file inside the kernel
    /// (`copy_file_range`). Returns the bytes copied, or nil where the kernel or the file
    /// systems cannot (the caller then copies through memory).
    func copy(from input: some ByteSource, at offset: UInt64, count: Int) throws -> Int? {
        guard let source = input.fileDescriptor, var position = off_t(exactly: offset) else { return nil }
        let copied = retryingOnInterrupt { csystem_copy_file_range(source, &position, descriptor, count) }
        if copied > 0 {
            self.position += UInt64(copied)
            startWritebackIfDue()
            return copied
        }
        if copied == 0 {
            throw RemuxError(.ioError, "\(input.name) ended at byte \(offset) while being read: the file shrank "
                             + "or was replaced")
        }
        let code = errno
        if code == ENOSPC || code == EFBIG || code == EIO || code == EDQUOT {
            throw RemuxError(.ioError, "cannot write \(destination): \(errorText(code))")
        }
        return nil
    }

    /// Flushes the data to disk (`fsync`; `fcntl(F_FULLFSYNC)` on Apple systems, through the
    /// drive's cache), closes the file and moves it to the destination.
    ///
    /// Without `overwrite` the move never replaces a file that appeared meanwhile:
    /// `renameat2(RENAME_NOREPLACE)`, or `link` then `unlink` where the file system lacks it.
    /// Without `syncing`, neither the file nor its folder is flushed: the caller makes them
    /// durable later, all at once (``OutputDirectory/publish()``'s `syncfs`), before anything
    /// reaches a user's path.
    func publish(overwrite: Bool, syncing: Bool = true) throws {
        guard !syncing || csystem_full_sync(descriptor) == 0 else {
            throw RemuxError(.ioError, "cannot flush \(destination) to disk: \(errorText(errno))")
        }
        // close(2) can report a delayed write error (network file systems): before the move.
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else {
            throw RemuxError(.ioError, "cannot write \(destination): \(errorText(errno)) (nothing was written there)")
        }
        if overwrite {
            // Whatever appeared meanwhile must also be a regular file (or a link) to be replaced.
            try Destination.check(destination, overwrite: true)
            guard rename(temporaryPath, destination) == 0 else {
                throw RemuxError(.cannotCreateOutput, "cannot replace \(destination): \(errorText(errno))")
            }
        } else {
            try moveWithoutReplacing()
        }
        isFinished = true
        TemporaryFiles.unregister(slot)
        slot = nil
        if syncing { try syncDirectory() }
    }

    /// Publishes a rewrite of `original` over it, only if the destination is still that
    /// version of that file: the two are swapped atomically (`renameat2(RENAME_EXCHANGE)`,
    /// `renamex_np(RENAME_SWAP)`) and what came out is checked; another file put there
    /// meanwhile is swapped back, untouched (``RemuxError/Code/fileBusy``). Where the file
    /// system cannot swap, the check comes first and `rename(2)` follows.
    func publish(replacing original: EditedFile) throws {
        guard csystem_full_sync(descriptor) == 0 else {
            throw RemuxError(.ioError, "cannot flush \(destination) to disk: \(errorText(errno))")
        }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else {
            throw RemuxError(.ioError, "cannot write \(destination): \(errorText(errno)) (nothing was written there)")
        }
        // From the swap on, the temporary name may hold another file: the signal handler
        // must not remove it. A copy left by a signal here is the next edit's stale temporary.
        TemporaryFiles.unregister(slot)
        slot = nil
        if csystem_rename_exchange(temporaryPath, destination) == 0 {
            var status = stat()
            let swappedOut = lstat(temporaryPath, &status) == 0 ? EditedFile(status) : nil
            guard let swappedOut, swappedOut.isSameVersion(as: original) else {
                // Not the file that was read: it goes back where it was, and the copy is removed.
                let restored = csystem_rename_exchange(temporaryPath, destination) == 0
                if restored { unlink(temporaryPath) }
                isFinished = true
                throw RemuxError(.fileBusy, "\(destination) was replaced or changed while it was being edited (by "
                                 + "another program?): this edit was not written; try again" + (restored ? ""
                                 : " (the other file could not be put back: it is at \(temporaryPath))"))
            }
            isFinished = true
            unlink(temporaryPath)  // The old version, now unnamed but for this.
        } else {
            let code = errno
            guard code == ENOSYS || code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP else {
                throw RemuxError(.cannotCreateOutput, "cannot replace \(destination): \(errorText(code))")
            }
            var status = stat()
            guard stat(destination, &status) == 0, EditedFile(status).isSameVersion(as: original) else {
                throw RemuxError(.fileBusy, "\(destination) was replaced or changed while it was being edited (by "
                                 + "another program?): this edit was not written; try again")
            }
            guard rename(temporaryPath, destination) == 0 else {
                throw RemuxError(.cannotCreateOutput, "cannot replace \(destination): \(errorText(errno))")
            }
            isFinished = true
        }
        try syncDirectory()
    }

    private func moveWithoutReplacing() throws {
        if csystem_rename_noreplace(temporaryPath, destination) == 0 { return }
        var code = errno
        // ENOTSUP and EOPNOTSUPP are one value in glibc and musl, two in Darwin.
        if code == ENOSYS || code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP {
            // No RENAME_NOREPLACE here: a hard link also fails if the destination exists.
            if link(temporaryPath, destination) == 0 {
                unlink(temporaryPath)
                return
            }
            code = errno
        }
        if code == EEXIST {
            // Checked before writing: something appeared meanwhile (or a check raced with it).
            try Destination.check(destination, overwrite: false)
            throw RemuxError(.destinationExists, "\(destination) was created by someone else while writing; "
                             + "it was left untouched")
        }
        throw RemuxError(.cannotCreateOutput, "cannot create \(destination): \(errorText(code))")
    }

    /// Syncs the folder, so that the rename survives a crash. A failure is reported: the
    /// file is in place and complete, but may not be there after a power cut.
    private func syncDirectory() throws {
        let fd = open(directoryName(of: destination), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // Some file systems cannot sync a folder (EINVAL): nothing to report there.
        guard csystem_full_sync(fd) == 0 || errno == EINVAL || errno == ENOTSUP else {
            throw RemuxError(.notSynced, "\(destination) was written in full and is in place, but its folder could "
                             + "not be synced to disk (\(errorText(errno))): after a crash the old file may be back")
        }
    }

    /// Closes and removes the temporary file unless it was published.
    func discard() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        if !isFinished {
            unlink(temporaryPath)
            isFinished = true
        }
        TemporaryFiles.unregister(slot)
        slot = nil
    }
}

/// What is at a destination path, and whether it may be replaced.
enum Destination {
    /// Throws unless `path` may be written: nothing is there, or (with `overwrite`) a
    /// regular file or a symbolic link to an existing file, which is replaced as a link
    /// (`rename(2)` never follows it, so its target is left untouched). A directory, a
    /// device, a FIFO or a socket is never replaced, nor is a dangling link: the messages
    /// say what is there and hint at no way to force it.
    static func check(_ path: String, overwrite: Bool) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFLNK {
            var target = stat()
            guard stat(path, &target) == 0 else {
                throw RemuxError(.cannotCreateOutput, "\(path) is a symbolic link to \(linkTarget(path)), which does "
                                 + "not exist; the link was left untouched")
            }
        } else if kind != S_IFREG {
            throw RemuxError(.cannotCreateOutput, "\(path) is \(describe(kind)): only a regular file "
                             + "can be replaced by the output")
        }
        if !overwrite {
            throw RemuxError(.destinationExists, "\(path) already exists"
                             + (kind == S_IFLNK ? " (a symbolic link to \(linkTarget(path)))" : ""))
        }
    }

    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a device (character special file)"
        case S_IFBLK: return "a device (block special file)"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    static func linkTarget(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return "?" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
