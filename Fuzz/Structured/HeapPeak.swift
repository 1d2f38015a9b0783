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

    /// The live heap growth above which one input is a finding. Issue 11 wants memory in
    /// proportion to the table bytes really present: 8 MiB, plus 3 times the input (its
    /// copy, the source, an output as large), plus 32 bytes per byte of `moov`/`moof` (a
    /// sample costs about 35 bytes in memory and takes at least 4 bytes of `stsz`). A
    /// `trun` claiming one sample per byte of a 1 MiB file (31 MiB) is over it; a real
    /// file with a 1 MiB `stsz` is well under.
    static func limit(inputBytes: Int, tableBytes: Int) -> Int {
        8 << 20 + 3 * inputBytes + 32 * tableBytes
    }

    /// The bytes of the top-level `moov` and `moof` boxes: where the tables are.
    static func tableBytes(_ bytes: [UInt8]) -> Int {
        var total = 0
        var at = 0
        while bytes.count - at >= 8 {
            var size = Int(readUInt32(bytes[...], at))
            if size == 1, bytes.count - at >= 16 { size = Int(clamping: readUInt64(bytes[...], at + 8)) }
            if size == 0 { size = bytes.count - at }
            guard size >= 8, size <= bytes.count - at else { break }
            let type = bytes[(at + 4)..<(at + 8)]
            if type.elementsEqual("moov".utf8) || type.elementsEqual("moof".utf8) { total += size }
            at += size
        }
        return total
    }

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
