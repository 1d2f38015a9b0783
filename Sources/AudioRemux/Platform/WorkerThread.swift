import CSystem

/// A thread of its own, started through the C shim: `pthread_t` is an integer in glibc, a
/// pointer in musl and an optional pointer in Darwin's Swift overlay, so the handle stays on
/// the C side and Swift code is the same everywhere (pthread_create(3), pthread_join(3),
/// pthread_detach(3)).
///
/// The command line's batch runs its jobs on such threads, and the recipes' `async` forms
/// run their blocking file I/O on one (`onOwnThread(_:)`), never on Swift's cooperative
/// pool, whose few threads other tasks need.
public final class WorkerThread: @unchecked Sendable {
    // @unchecked: `handle` is touched only by the thread that created the WorkerThread.

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
    public init?(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        guard let handle = csystem_thread_start(workerThreadMain, context) else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        self.handle = handle
    }

    /// Waits for the thread to finish. Later calls return at once.
    public func join() {
        guard let handle else { return }
        csystem_thread_join(handle)
        self.handle = nil
    }

    /// Lets the thread finish on its own: nothing waits for it. Later calls, and `join`,
    /// return at once.
    public func detach() {
        guard let handle else { return }
        csystem_thread_detach(handle)
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

/// Runs `work`, blocking file I/O, on a thread of its own and awaits its result: the `async`
/// forms of the recipes, so that a long copy never holds one of the cooperative pool's few
/// threads (issue 30). `work` polls the closure it is given; it returns true once the
/// calling task is cancelled, and the recipe then stops, removes what it wrote and throws
/// ``RemuxError/Code/cancelled``. Where no thread can be started, `work` runs here.
func onOwnThread<T: Sendable>(
    _ work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws(RemuxError) -> T
) async throws(RemuxError) -> T {
    let cancelled = Locked(false)
    let isCancelled: @Sendable () -> Bool = { cancelled.withLock { $0 } }
    let outcome: Result<T, RemuxError> = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, RemuxError>, Never>) in
            let job: @Sendable () -> Void = {
                do throws(RemuxError) {
                    continuation.resume(returning: .success(try work(isCancelled)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if let thread = WorkerThread(job) {
                thread.detach()
            } else {
                job()
            }
        }
    } onCancel: {
        cancelled.withLock { $0 = true }
    }
    return try outcome.get()
}
