// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - clock_gettime(CLOCK_MONOTONIC): clock_gettime(3), macOS 10.12 / iOS 10 and later.
//   - isatty: isatty(3). write: write(2). ru_maxrss (bytes on Darwin): Platform/System.swift.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux
import ISOBMFF

/// Output helpers: stdout, stderr, a clock and the progress bar.
enum Terminal {
    /// Writes `text` to `descriptor`, or, on a batch worker (``Captured``), keeps it to be
    /// printed in input order.
    static func write(_ text: String, to descriptor: Int32) {
        if let captured = Captured.current {
            captured.append(text, to: descriptor)
            return
        }
        var text = text
        text.withUTF8 { bytes in
            var done = 0
            while done < bytes.count {
                guard let base = bytes.baseAddress else { return }
                let count = rawWrite(descriptor, base + done, bytes.count - done)
                if count <= 0 { return }
                done += count
            }
        }
    }

    static func line(_ text: String) { write(text + "\n", to: 1) }
    static func error(_ text: String) { write("extract-audio: error: " + text + "\n", to: 2) }
    static func warning(_ text: String) { write("extract-audio: warning: " + text + "\n", to: 2) }

    /// Seconds on a monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static var stderrIsTerminal: Bool { isatty(2) != 0 }
}

/// `write(2)`, under a name the `write` methods above do not shadow.
private func rawWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// A one-line progress bar on stderr: percentage, throughput and time left. It appears
/// only when the copy takes a moment (after 0.3 s), redraws at most ten times a second,
/// and erases itself when done.
final class ProgressBar {
    let label: String
    let start = Terminal.now()
    var lastDraw = 0.0
    var shown = false

    init(label: String) {
        self.label = label
    }

    func update(_ progress: RemuxProgress) {
        let now = Terminal.now()
        let elapsed = now - start
        guard elapsed >= 0.3, now - lastDraw >= 0.1 || progress.bytesDone == progress.bytesTotal else { return }
        lastDraw = now
        shown = true
        let fraction = progress.bytesTotal == 0 ? 1 : Double(progress.bytesDone) / Double(progress.bytesTotal)
        let rate = Double(progress.bytesDone) / max(elapsed, 1e-6)
        let remaining = rate > 0 ? Double(progress.bytesTotal - progress.bytesDone) / rate : 0
        let line = Self.line(label: label, fraction: fraction, bytesPerSecond: rate, secondsLeft: remaining,
                             columns: terminalColumns(of: 2) ?? 80)
        Terminal.write("\r\u{1B}[K" + line, to: 2)
    }

    /// The bar's text, shorter than `columns` so that it never wraps (a wrapped line leaves a
    /// stale copy per redraw): the label is shortened from the left ("…name.mp4") first,
    /// then dropped, then the figures.
    static func line(label: String, fraction: Double, bytesPerSecond: Double?, secondsLeft: Double,
                     columns: Int) -> String {
        let fraction = min(max(fraction.isFinite ? fraction : 0, 0), 1)
        let width = 24
        // fraction is in [0, 1]: both are whole numbers in range.
        let filled = Int(MediaTime.integer(fraction * Double(width), rounding: .down) ?? 0)
        let percent = MediaTime.integer(fraction * 100, rounding: .down) ?? 0
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            + "\(percent)%"
        let figures = (bytesPerSecond.map { "  \(formatted($0 / 1_000_000, digits: 1)) MB/s" } ?? "")
            + "  ETA \(formatted(secondsLeft, digits: 0)) s"
        let room = columns - 1  // The last column would make some terminals wrap.
        var text = bar + figures
        if displayWidth(text) > room { text = bar }
        if displayWidth(text) > room { return String(text.suffix(max(room, 0))) }
        let labelRoom = room - displayWidth(text) - 1
        guard labelRoom >= 4 else { return text }
        var shown = label
        if displayWidth(shown) > labelRoom {
            // Keep the end of the name, which tells files apart.
            var tail: [Character] = []
            var used = 1
            for character in label.reversed() {
                let size = displayWidth(String(character))
                guard used + size <= labelRoom else { break }
                tail.insert(character, at: 0)
                used += size
            }
            shown = "…" + String(tail)
        }
        return shown + " " + text
    }

    /// Columns a terminal gives `text`: East Asian and other non-ASCII characters are
    /// counted as two (an overestimate for some, never an underestimate).
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + ($1.isASCII || $1 == "…" ? 1 : 2) }
    }

    /// Erases the bar.
    func finish() {
        if shown { Terminal.write("\r\u{1B}[K", to: 2) }
    }
}
