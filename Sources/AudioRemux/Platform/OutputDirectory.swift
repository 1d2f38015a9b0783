// Darwin review: mkdir(2), rmdir(2), opendir(3)/readdir(3)/closedir(3), lstat(2), unlink(2),
// rename(2), fsync(2) exist with these signatures on Darwin; `d_name` is a fixed C array
// there as in glibc, read through its address. Darwin has no syncfs(2):
// csystem_can_sync_file_system() is 0 there, so each file is flushed as it is published
// (F_FULLFSYNC). CI builds this file on Linux only.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// A folder of output files published at once: the files are written into a temporary
/// folder beside the destination, which is renamed into place at the end
/// (`renameat2(RENAME_NOREPLACE)`); until then nothing is at the destination, and on failure
/// (or without ``publish()``) the temporary folder and every file in it are removed — on
/// SIGINT/SIGTERM too: the folder is registered with ``TemporaryFiles``, whose
/// ``TemporaryFiles/removeAll()`` the CLI's signal handler calls.
///
/// With `overwrite`, an existing destination is replaced only when it is a folder this
/// command could have written: holding regular files only, among them `master.m3u8` (or
/// empty). The two are swapped atomically (`renameat2(RENAME_EXCHANGE)`) and the old files
/// removed after.
///
/// Durability: when ``publish()`` returns, every file and the folder are on disk, as when each
/// file was flushed on its own. On Linux the files are not flushed one by one (a 2-hour
/// package has thousands: their `fsync`s were 90 % of its time); ``publish()`` flushes the
/// file system holding the folder once (`syncfs(2)` on a descriptor opened before any file
/// was written, so that a writeback error since then is reported, Linux 5.8 and later), then
/// renames. Elsewhere (``syncsEachFile``) each file is flushed as it is published.
final class OutputDirectory {
    let destination: String
    let temporaryPath: String
    private let overwrite: Bool
    private var isPublished = false
    /// The folder's slot in ``TemporaryFiles`` (nil when it could not be registered).
    private var slot: Int?
    /// The temporary folder, open for `syncfs`; -1 where the files are flushed one by one.
    private var descriptor: Int32 = -1
    /// Whether each file written into the folder must be flushed as it is published: true
    /// where the folder cannot flush them all at once (no `syncfs`, or the folder could not
    /// be opened).
    var syncsEachFile: Bool { descriptor < 0 }

    /// Creates the temporary folder. Throws `.destinationExists` when `destination` exists
    /// (and may not be replaced), `.cannotCreateOutput` when it is not a replaceable folder
    /// or the temporary folder cannot be made.
    init(destination: String, overwrite: Bool) throws {
        var path = destination
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.destination = path
        self.overwrite = overwrite
        try Self.checkReplaceable(path, overwrite: overwrite)
        let name = ".\(baseName(of: path)).package-\(getpid())"
        var candidate = directoryName(of: path) + "/" + name
        var attempt = 0
        while mkdir(candidate, 0o777) != 0 {
            let code = errno
            attempt += 1
            guard code == EEXIST, attempt < 100 else {
                throw RemuxError(.cannotCreateOutput, "cannot create a folder beside \(path): \(errorText(code))")
            }
            candidate = directoryName(of: path) + "/" + name + "-\(attempt)"
        }
        temporaryPath = candidate
        // Registered once it is ours (a folder of the same name made by another run is never
        // a signal's to remove); a signal between mkdir and here leaves it, empty.
        slot = TemporaryFiles.register(candidate, isFolder: true)
        if csystem_can_sync_file_system() != 0 {
            descriptor = retryingOnInterrupt { open(candidate, O_RDONLY | O_CLOEXEC) }
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !isPublished { Self.removeTree(temporaryPath) }
        TemporaryFiles.unregister(slot)
    }

    /// The path of the output file `name` inside the folder being written.
    func path(of name: String) -> String {
        temporaryPath + "/" + name
    }

    static func checkReplaceable(_ path: String, overwrite: Bool) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw RemuxError(.cannotCreateOutput, "\(path) is \(Destination.describe(status.st_mode & S_IFMT)), "
                             + "not a folder: package writes a folder")
        }
        guard overwrite else { throw RemuxError(.destinationExists, "\(path) already exists") }
        let names = try entries(of: path)
        guard names.isEmpty || names.contains("master.m3u8") else {
            throw RemuxError(.cannotCreateOutput, "\(path) holds files but no master.m3u8: it was not written by "
                             + "package and is left alone (only a folder package wrote is replaced)")
        }
        for name in names {
            var entry = stat()
            guard lstat(path + "/" + name, &entry) == 0, entry.st_mode & S_IFMT == S_IFREG else {
                throw RemuxError(.cannotCreateOutput, "\(path) holds \(name), which is not a regular file: the folder "
                                 + "is left alone")
            }
        }
    }

    /// The names in folder `path`, without `.` and `..`.
    static func entries(of path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            throw RemuxError(.ioError, "cannot read the folder \(path): \(errorText(errno))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the regular files in `path`, then the folder (best effort: a cleanup path).
    static func removeTree(_ path: String) {
        for name in (try? entries(of: path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// Moves the folder to its destination: either all of it appears there or nothing does.
    func publish() throws {
        if descriptor >= 0 {
            // Every file written into the folder, and the folder, in one flush (see the type's
            // comment); a failure publishes nothing.
            guard csystem_sync_file_system(descriptor) == 0 else {
                throw RemuxError(.ioError, "cannot flush the files of \(destination) to disk: \(errorText(errno)) "
                                 + "(nothing was written there)")
            }
        } else {
            syncFolder(temporaryPath)
        }
        if csystem_rename_noreplace(temporaryPath, destination) == 0 {
            // A signal before this finds no folder at the temporary name: nothing removed.
            TemporaryFiles.unregister(slot)
            slot = nil
            isPublished = true
            syncFolder(directoryName(of: destination))
            return
        }
        let code = errno
        guard code == EEXIST || code == ENOTEMPTY else {
            throw RemuxError(.cannotCreateOutput, "cannot move the output folder to \(destination): "
                             + errorText(code))
        }
        guard overwrite else { throw RemuxError(.destinationExists, "\(destination) already exists") }
        // Checked again just before the swap: what is replaced must still be a package's folder.
        try Self.checkReplaceable(destination, overwrite: true)
        guard csystem_rename_exchange(temporaryPath, destination) == 0 else {
            throw RemuxError(.cannotCreateOutput, "cannot replace \(destination): \(errorText(errno))")
        }
        isPublished = true
        // The old folder, now under the temporary name: removed here, or by a signal's handler.
        Self.removeTree(temporaryPath)
        TemporaryFiles.unregister(slot)
        slot = nil
        syncFolder(directoryName(of: destination))
    }

    private func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
