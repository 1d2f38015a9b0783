import CSystem

/// A joinable thread of a batch, started through the C shim: `pthread_t` is an integer in
/// glibc, a pointer in musl and an optional pointer in Darwin's Swift overlay, so the
/// handle stays on the C side and Swift code is the same everywhere.
final class WorkerThread {
    /// The running closure, retained for the thread until it has run.
    private final class Body {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }

    private var handle: OpaquePointer?

    /// Starts `body` on a new thread; nil when the system cannot start one (the caller
    /// then does the work itself).
    init?(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        guard let handle = csystem_thread_start(workerThreadMain, context) else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        self.handle = handle
    }

    /// Waits for the thread to finish. Later calls return at once.
    func join() {
        guard let handle else { return }
        csystem_thread_join(handle)
        self.handle = nil
    }

    deinit {
        join()
    }

    /// The thread's entry point; `context` is a retained `Body`.
    fileprivate static func main(_ context: UnsafeMutableRawPointer?) {
        guard let context else { return }
        Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
    }
}

private func workerThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    WorkerThread.main(context)
    return nil
}
