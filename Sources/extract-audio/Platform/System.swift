// Darwin review (issue 21). CI builds this file on Linux only; the Darwin branches were
// checked line by line against Apple's manual pages:
//   - getrusage(RUSAGE_SELF): getrusage(2) gives ru_maxrss in bytes on Darwin (the Linux
//     page says kilobytes), hence the division by 1024 for KiB.
//   - Case-insensitive names on macOS and iOS: APFS and HFS+ volumes are created
//     case-insensitive by default on macOS (diskutil(8), "APFS" vs "Case-sensitive APFS");
//     treating names without case where a volume is in fact case-sensitive only renames
//     one more output with -2, never overwrites one.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the command line needs to know about the system it runs on. Every `#if os(...)`
/// of the command line is here or in this folder.
enum System {
    /// Two output paths that differ only in case name one file on macOS's default volumes:
    /// the key under which a batch compares them.
    static func nameKey(_ path: String) -> String {
        #if os(macOS) || os(iOS)
        return path.lowercased()
        #else
        return path
        #endif
    }

    /// This process's peak resident memory in KiB: `VmHWM` from `/proc/self/status` on
    /// Linux (per address space, so not inflated by the parent that started us, unlike
    /// `ru_maxrss`), `ru_maxrss` elsewhere.
    static func peakMemoryKiB() -> Int? {
        #if os(Linux)
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("VmHWM:") {
                return Int(text.dropFirst(6).filter { $0.isNumber })
            }
        }
        return nil
        #else
        var usage = rusage()
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
        return Int(usage.ru_maxrss) / 1024  // bytes on Darwin: getrusage(2)
        #endif
    }
}
