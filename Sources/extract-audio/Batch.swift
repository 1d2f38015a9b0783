// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - sysconf(_SC_NPROCESSORS_ONLN): sysconf(3); an Int32 constant on Darwin too.
//   - pthread_key_create/getspecific/setspecific: pthread_key_create(3),
//     pthread_getspecific(3); pthread_key_t is an integer on every C library.
//   - Threads: started by AudioRemux's Platform/WorkerThread.swift through the shim (pthread_create(3)):
//     pthread_t is an optional pointer in Darwin's overlay, an integer in glibc and a
//     pointer in musl, so Swift never builds one.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

/// Runs the inputs of a batch (`--output-dir` with several inputs) on `--jobs` threads.
///
/// What a job prints is held back while it runs and printed when every job before it has
/// been printed, so that the lines, the `--json` objects and the summary come in input
/// order, as in a serial run. A job's failure is its own outcome: the other jobs go on. On
/// a terminal one bar shows the batch as a whole (jobs do not draw their own).
enum Batch {
    /// The number of jobs `--jobs` defaults to: the processors online.
    static var defaultWorkers: Int {
        max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1)
    }

    /// Runs `body` for every index in `0..<count` on up to `workers` threads and returns the
    /// outcomes in index order.
    static func run(count: Int, workers: Int, showsProgress: Bool,
                    _ body: @escaping @Sendable (Int) -> Outcome) -> [Outcome] {
        let workers = min(max(workers, 1), count)
        guard workers > 1 else {
            // One at a time: text goes straight out, as a job's own bar does.
            return (0..<count).map(body)
        }
        let state = State(count: count, bar: showsProgress ? BatchBar(total: count) : nil, body: body)
        let threads = (0..<workers).compactMap { _ in WorkerThread { state.work() } }
        if threads.isEmpty {
            // No thread could be started: run them here, one after another.
            state.work()
        }
        for thread in threads { thread.join() }
        return state.outcomes()
    }

    /// The shared state of a parallel batch: the next job to start, and what finished jobs
    /// left to print.
    final class State: Sendable {
        struct Progress {
            var next = 0
            var nextToPrint = 0
            var done = 0
            var outcomes: [Outcome?]
            var printed: [[Captured.Chunk]?]
        }

        let count: Int
        let body: @Sendable (Int) -> Outcome
        let progress: Locked<Progress>
        let bar: BatchBar?

        init(count: Int, bar: BatchBar?, body: @escaping @Sendable (Int) -> Outcome) {
            self.count = count
            self.body = body
            self.bar = bar
            progress = Locked(Progress(outcomes: Array(repeating: nil, count: count),
                                      printed: Array(repeating: nil, count: count)))
        }

        /// A worker's loop: takes the next job until none is left.
        func work() {
            while true {
                let index: Int? = progress.withLock { state in
                    guard state.next < count else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let index else { return }
                let captured = Captured()
                let outcome = captured.during { body(index) }
                finish(index, outcome: outcome, text: captured.chunks)
            }
        }

        /// Records a finished job and prints, in input order, every job whose turn has come.
        /// The printing happens under the lock: two workers never interleave their lines.
        private func finish(_ index: Int, outcome: Outcome, text: [Captured.Chunk]) {
            progress.withLock { state in
                state.outcomes[index] = outcome
                state.printed[index] = text
                state.done += 1
                bar?.erase()
                while state.nextToPrint < count, let chunks = state.printed[state.nextToPrint] {
                    for chunk in chunks { Terminal.write(chunk.text, to: chunk.descriptor) }
                    state.printed[state.nextToPrint] = []
                    state.nextToPrint += 1
                }
                if state.done < count { bar?.draw(done: state.done) }
            }
        }

        func outcomes() -> [Outcome] {
            progress.withLock { state in state.outcomes.map { $0 ?? .failed(.ioError) } }
        }
    }
}

/// The text a job prints while it runs on a batch worker, kept in order for later.
/// ``Terminal/write(_:to:)`` appends here instead of writing while one is installed on the
/// calling thread.
final class Captured {
    struct Chunk: Sendable {
        let descriptor: Int32
        let text: String
    }

    private(set) var chunks: [Chunk] = []

    func append(_ text: String, to descriptor: Int32) {
        chunks.append(Chunk(descriptor: descriptor, text: text))
    }

    /// Runs `body` with this capture installed on the calling thread.
    func during<T>(_ body: () -> T) -> T {
        let key = Self.key
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return body()
    }

    /// The capture installed on the calling thread, if any.
    static var current: Captured? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Captured>.fromOpaque(pointer).takeUnretainedValue()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}

/// The one progress bar of a parallel batch: files done of the total, and time left.
final class BatchBar: Sendable {
    let total: Int
    let start = Terminal.now()

    init(total: Int) {
        self.total = total
    }

    /// Draws "[####....] 40%  12 of 30 files  ETA 3 s", clipped to the terminal's width.
    func draw(done: Int) {
        let elapsed = Terminal.now() - start
        let fraction = Double(done) / Double(max(total, 1))
        let left = done > 0 ? elapsed / Double(done) * Double(total - done) : 0
        let line = ProgressBar.line(label: "\(done) of \(total) files", fraction: fraction,
                                    bytesPerSecond: nil, secondsLeft: left, columns: terminalColumns(of: 2) ?? 80)
        Terminal.write("\r\u{1B}[K" + line, to: 2)
    }

    func erase() {
        Terminal.write("\r\u{1B}[K", to: 2)
    }
}
