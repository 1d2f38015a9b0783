// The peak of live heap bytes while one input runs, from ASan's malloc/free hooks, so that
// memory out of proportion to the input (issue 11, point 18: peak RSS <= 64 MiB for any
// input under 100 MB) is a finding even when no single allocation passes -malloc_limit_mb
// and the process as a whole stays under -rss_limit_mb.

@_silgen_name("__sanitizer_install_malloc_and_free_hooks")
func sanitizerInstallHooks(_ onMalloc: @convention(c) (UnsafeRawPointer?, Int) -> Void,
                           _ onFree: @convention(c) (UnsafeRawPointer?) -> Void) -> CInt

@_silgen_name("__sanitizer_get_allocated_size")
func sanitizerAllocatedSize(_ pointer: UnsafeRawPointer?) -> Int

enum HeapPeak {
    // Touched only from the hooks and between inputs; the targets are single-threaded.
    nonisolated(unsafe) static var live = 0
    nonisolated(unsafe) static var peak = 0
    nonisolated(unsafe) static var installed = false

    /// The live bytes above which one input is a finding: 48 MiB leaves room for the
    /// binary and the runtime within 64 MiB of RSS.
    static let limit = 48 << 20

    /// Starts measuring; returns the live bytes now (the baseline).
    static func start() -> Int {
        if !installed {
            installed = true
            _ = sanitizerInstallHooks({ _, size in
                HeapPeak.live &+= size
                if HeapPeak.live > HeapPeak.peak { HeapPeak.peak = HeapPeak.live }
            }, { pointer in
                HeapPeak.live &-= sanitizerAllocatedSize(pointer)
            })
        }
        peak = live
        return live
    }
}
