import CSystem

/// A value guarded by a lock, for state that several threads share: a batch's next job,
/// the last percentage a progress line drew.
///
/// The lock is a `pthread_mutex_t` allocated once on the heap by the C shim (a mutex must
/// not move, and a Swift value may), the same code on Linux and on Apple platforms. The
/// standard library's `Mutex` would do the same, but it needs macOS 15, iOS 18, tvOS 18,
/// watchOS 11 or visionOS 2, newer than the platforms this package supports.
///
/// ```swift
/// let next = Locked(0)
/// let job = next.withLock { value in
///     defer { value += 1 }
///     return value
/// }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between lock and unlock.
    private let lock: OpaquePointer
    private var value: Value

    /// Creates a lock guarding `value`.
    ///
    /// Stops the process if the system cannot allocate a mutex, as it would on running
    /// out of memory.
    public init(_ value: sending Value) {
        guard let lock = csystem_lock_create() else {
            fatalError("Locked: cannot create a mutex (out of memory)")
        }
        self.lock = lock
        self.value = value
    }

    deinit {
        csystem_lock_destroy(lock)
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    ///
    /// `body` must not call `withLock` on the same instance: the mutex is not recursive.
    public func withLock<Result, Failure: Error>(_ body: (inout sending Value) throws(Failure) -> sending Result)
        throws(Failure) -> sending Result {
        csystem_lock_lock(lock)
        defer { csystem_lock_unlock(lock) }
        return try body(&value)
    }
}
