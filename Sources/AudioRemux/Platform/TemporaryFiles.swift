// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - PATH_MAX: 1024 on Darwin (sys/syslimits.h), 4096 in glibc; the slots are sized from
//     it, a longer path is simply not tracked (and still removed on ordinary errors).
//   - unlink from a signal handler: unlink(2) is async-signal-safe, sigaction(2) lists it;
//     csystem_remove_folder calls only rmdir(2) there (see CSystem.c).
//   - csystem_atomic_*: the compiler's __atomic builtins, lock-free for 64 bits on arm64,
//     arm64_32 and x86_64 (no call into the C library, so safe in a handler).
//   - Locked: pthread_mutex_init(3), pthread_mutex_lock(3) in the shim (not called from the
//     handler).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// The temporary output files and folders in progress, so that a signal handler can remove
/// them.
///
/// ``removeAll()`` is async-signal-safe: it reads atomic bit sets (the C shim's lock-free
/// `__atomic` operations, not a lock) and calls `unlink` on the files' paths, then removes
/// each folder with the files in it (`package`'s folder, whose finished segments are already
/// in place: the shim lists it with the getdents64 system call on Linux, only `rmdir`
/// elsewhere), the paths kept in memory allocated once, never freed. Up to 64 files and
/// folders in progress are tracked; beyond that they are still removed on every ordinary
/// error path.
public enum TemporaryFiles {
    static let slotCount = 64
    static let pathCapacity = Int(PATH_MAX) + 1
    /// One bit per slot: set while the slot holds the path of a file in progress. Only
    /// read and written through `csystem_atomic_*`; allocated once, never freed.
    nonisolated(unsafe) static let active: UnsafeMutablePointer<UInt64> = {
        let word = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }()
    /// One bit per slot: set while the slot holds a folder (removed with its files, after
    /// the files). Written before the slot's `active` bit.
    nonisolated(unsafe) static let folders: UnsafeMutablePointer<UInt64> = {
        let word = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }()
    /// Slots taken (including ones being filled); guarded so two threads never share one.
    static let taken = Locked<UInt64>(0)
    // Allocated once and never freed, so a signal handler can read it at any time.
    nonisolated(unsafe) static let paths = UnsafeMutablePointer<CChar>.allocate(capacity: slotCount * pathCapacity)

    /// Records `path` (a folder, removed with the files in it, when `isFolder`); returns its
    /// slot, or nil when the path is too long or all are taken.
    static func register(_ path: String, isFolder: Bool = false) -> Int? {
        let utf8 = Array(path.utf8CString)
        guard utf8.count <= pathCapacity else { return nil }
        let slot: Int? = taken.withLock { bits in
            guard bits != UInt64.max else { return nil }
            let free = (~bits).trailingZeroBitCount
            bits |= 1 << UInt64(free)
            return free
        }
        guard let slot else { return nil }
        let destination = paths + slot * pathCapacity
        utf8.withUnsafeBufferPointer { source in
            for (i, byte) in source.enumerated() { destination[i] = byte }
        }
        if isFolder { _ = csystem_atomic_or(folders, 1 << UInt64(slot)) }
        _ = csystem_atomic_or(active, 1 << UInt64(slot))
        return slot
    }

    static func unregister(_ slot: Int?) {
        guard let slot else { return }
        _ = csystem_atomic_and(active, ~(1 << UInt64(slot)))
        _ = csystem_atomic_and(folders, ~(1 << UInt64(slot)))
        taken.withLock { bits in bits &= ~(1 << UInt64(slot)) }
    }

    /// Removes every temporary file in progress, then every temporary folder with the files
    /// in it. Safe to call from a signal handler.
    public static func removeAll() {
        let bits = csystem_atomic_load(active)
        guard bits != 0 else { return }
        let folderBits = csystem_atomic_load(folders)
        for slot in 0..<slotCount where bits & (1 << UInt64(slot)) != 0 && folderBits & (1 << UInt64(slot)) == 0 {
            unlink(paths + slot * pathCapacity)
        }
        for slot in 0..<slotCount where bits & folderBits & (1 << UInt64(slot)) != 0 {
            _ = csystem_remove_folder(paths + slot * pathCapacity)
        }
    }
}
