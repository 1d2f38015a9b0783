// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - fputs(stderr): fputs(3); stderr is a global of the Darwin overlay too. The lock is
//     AudioRemux's Locked (a pthread mutex), not Synchronization's Mutex (macOS 15).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

/// Writes `text` to standard error, where progress goes, so that standard output holds
/// only the results.
@Sendable func printError(_ text: String, terminator: String = "\n") {
    fputs(text + terminator, stderr)
}

/// The progress of one file on one line of the terminal, redrawn only when the percentage
/// changes: the extractor reports every piece it copies, which may be thousands.
///
/// The extractor calls `update` from the thread doing the work, hence `Sendable` and the
/// lock around the last percentage shown.
final class ProgressLine: Sendable {
    let name: String
    private let shown = Locked(-1)

    init(name: String) {
        self.name = name
    }

    func update(_ progress: RemuxProgress) {
        guard progress.bytesTotal > 0 else { return }
        let percent = Int(progress.bytesDone * 100 / progress.bytesTotal)
        let changed = shown.withLock { last in
            defer { last = percent }
            return last != percent
        }
        if changed { printError("\r\(name): \(percent)%", terminator: "") }
    }

    /// Erases the line, before the file's result is printed.
    func clear() {
        printError("\r\u{1B}[K", terminator: "")
    }
}
