import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Progress reports and cancellation, through the synchronous and the `async` entry points.
final class ProgressAndCancellationTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// A movie of 4 MiB of samples in 64 chunks scattered over the file, so the copy takes
    /// many steps even with the fast path.
    func largeInput() -> String {
        var synthetic = SyntheticMovie(sampleCount: 256)
        synthetic.sampleSizes = [UInt32](repeating: 16 << 10, count: 256)
        synthetic.sampleToChunk = SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: 4, sampleDescriptionIndex: 1)])
        synthetic.chunkOffsets = (0..<64).reversed().map { UInt64($0) * (64 << 10) }  // stored back to front
        return directory.write("large.mp4", synthetic.build())
    }

    final class Recorder: @unchecked Sendable {
        var reports: [RemuxProgress] = []
    }

    func testProgressIsMonotonicAndEndsAtTheTotals() throws {
        let recorder = Recorder()
        let result = try AudioExtractor.extract(from: largeInput(), to: directory.file("out.m4a"),
                                                options: ExtractionOptions(bufferSize: 64 << 10),
                                                progress: { recorder.reports.append($0) })
        let reports = recorder.reports
        XCTAssertGreaterThanOrEqual(reports.count, 64)
        for (previous, next) in zip(reports, reports.dropFirst()) {
            XCTAssertLessThanOrEqual(previous.bytesDone, next.bytesDone)
            XCTAssertLessThanOrEqual(previous.samplesDone ?? -1, next.samplesDone ?? -1)
        }
        let last = try XCTUnwrap(reports.last)
        XCTAssertEqual(last.bytesDone, last.bytesTotal)
        XCTAssertEqual(last.bytesTotal, 4 << 20)
        XCTAssertEqual(last.samplesDone, 256)
        XCTAssertEqual(last.samplesTotal, result.sampleCount)
    }

    func testCancellingStopsAndLeavesNothing() throws {
        var polls = 0
        XCTAssertThrowsError(try AudioExtractor.extract(from: largeInput(), to: directory.file("out.m4a"),
                                                        isCancelled: { polls += 1; return polls > 3 })) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cancelled)
        }
        XCTAssertEqual(directory.contents, ["large.mp4"])
    }

    func testAsyncExtractionHonoursTaskCancellation() async throws {
        let input = largeInput()
        let output = directory.file("async.m4a")
        // The task waits at a gate until it has been cancelled, so the test does not race
        // the (fast) extraction.
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await AudioExtractor.extract(from: input, to: output)
        }
        task.cancel()
        opener.yield()
        opener.finish()
        do {
            _ = try await task.value
            XCTFail("a cancelled task must not publish")
        } catch let error as RemuxError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertEqual(directory.contents, ["large.mp4"])
        let finished = try await AudioExtractor.extract(from: input, to: output)
        XCTAssertEqual(finished.sampleCount, 256)
    }

    /// A cut reports progress and stops when asked, as extraction does (issue 30: it had
    /// neither, nor an async form).
    func testACutReportsProgressAndCanBeCancelled() throws {
        let input = largeInput()
        let range = CutRange(from: try CutTime(parsing: "0.02"), to: try CutTime(parsing: "0.08"))
        var reports: [RemuxProgress] = []
        let result = try Remux.run(from: input, to: directory.file("cut.mp4"), options: RemuxOptions(range: range),
                                   progress: { reports.append($0) })
        XCTAssertFalse(reports.isEmpty)
        XCTAssertTrue(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesDone <= $1.bytesDone })
        XCTAssertEqual(reports.last?.bytesDone, reports.last?.bytesTotal)
        XCTAssertLessThan(reports.last?.bytesTotal ?? .max, result.bytesWritten, "sample bytes, boxes not counted")
        XCTAssertNil(reports.last?.samplesDone, "a remux counts bytes only")
        var polls = 0
        XCTAssertThrowsError(try Remux.run(from: input, to: directory.file("stopped.mp4"),
                                           options: RemuxOptions(range: range),
                                           isCancelled: { polls += 1; return polls > 3 })) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cancelled)
        }
        XCTAssertEqual(directory.contents.sorted(), ["cut.mp4", "large.mp4"])
    }

    func testAsyncCutHonoursTaskCancellation() async throws {
        let input = largeInput()
        let output = directory.file("async.mp4")
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await Remux.run(from: input, to: output)
        }
        task.cancel()
        opener.yield()
        opener.finish()
        do {
            _ = try await task.value
            XCTFail("a cancelled task must not publish")
        } catch let error as RemuxError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertEqual(directory.contents, ["large.mp4"])
    }

    /// The async forms do their blocking I/O on threads of their own (issue 30: they ran on
    /// the cooperative pool, whose few threads — one per core — other tasks then waited for).
    /// More extractions than the pool has threads, each slowed in its progress callback: a
    /// task started meanwhile must run while none of them has finished.
    func testAsyncFormsLeaveTheCooperativePoolFree() async throws {
        let input = largeInput()
        let finished = Locked(0)
        let count = max(16, 4 * ProcessInfo.processInfo.activeProcessorCount)
        let outputs = (0..<count).map { directory.file("pool-\($0).m4a") }
        let jobs = outputs.map { output in
            Task {
                _ = try await AudioExtractor.extract(from: input, to: output,
                                                     options: ExtractionOptions(bufferSize: 64 << 10)) { _ in
                    usleep(5_000)  // 64 reports: about a third of a second each.
                }
                finished.withLock { $0 += 1 }
            }
        }
        try await Task.sleep(nanoseconds: 50_000_000)  // Let them start.
        let seen = await Task.detached { finished.withLock { $0 } }.value
        XCTAssertEqual(seen, 0, "a task waited for the extractions to give the pool back")
        for job in jobs { try await job.value }
        XCTAssertEqual(finished.withLock { $0 }, count)
    }

    func testNotAnMP4SaysWhatItLooksLike() {
        let cases: [([UInt8], String)] = [
            ([0x1A, 0x45, 0xDF, 0xA3] + [UInt8](repeating: 0, count: 60), "Matroska or WebM"),
            (Array("RIFF\0\0\0\0WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 40), "WAV"),
            (Array("ID3".utf8) + [UInt8](repeating: 0, count: 60), "MP3"),
            ([0xFF, 0xF1, 0x50, 0x80] + [UInt8](repeating: 0, count: 60), "ADTS"),
            ((0..<3).flatMap { _ in [0x47] + [UInt8](repeating: 0, count: 187) }, "transport stream"),
        ]
        for (bytes, kind) in cases {
            let input = directory.write("x.bin", bytes)
            XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("x.m4a"))) {
                XCTAssertEqual(($0 as? RemuxError)?.code, .invalidInput)
                XCTAssertTrue("\($0)".contains(kind), "\($0)")
            }
        }
    }
}
