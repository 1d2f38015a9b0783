import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// `--jobs N` (issue 15): a batch extracted several inputs at a time still reads as a serial
/// run: lines, `--json` objects and the summary in input order, one failure never stopping
/// the others, the exit status that of the first input (in input order) that failed.
final class BatchJobsTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// A valid movie of `count` samples of 200 bytes: the large ones take long enough to
    /// finish after the small inputs that follow them.
    func movie(samples count: Int) -> [UInt8] {
        var movie = SyntheticMovie(sampleCount: 2)
        movie.sampleSizes = Array(repeating: 200, count: count)
        movie.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: UInt32(count), sampleDelta: 1024)])
        movie.chunkOffsets = stride(from: 0, to: count, by: 2).map { UInt64($0) * 200 }
        return movie.build()
    }

    /// Inputs whose work differs widely, with failures of two kinds among them: a corrupt
    /// file (65) before a video without audio (79).
    func inputs() -> (paths: [String], failing: Set<Int>) {
        var corrupt = SyntheticMovie()
        corrupt.sampleToChunk.entries[0].firstChunk = 0
        var video = SyntheticMovie()
        video.handler = .vide
        var paths: [String] = []
        var failing: Set<Int> = []
        for index in 0..<12 {
            let name = String(format: "in%02d.mp4", index)
            switch index {
            case 3:
                paths.append(directory.write(name, corrupt.build()))
                failing.insert(index)
            case 7:
                paths.append(directory.write(name, video.build()))
                failing.insert(index)
            case 0, 5:
                paths.append(directory.write(name, movie(samples: 60_000)))
            default:
                paths.append(directory.write(name, SyntheticMovie(sampleCount: 4 + 2 * index).build()))
            }
        }
        return (paths, failing)
    }

    func testParallelJSONComesInInputOrderAndEqualsTheSerialRun() throws {
        let (paths, failing) = inputs()
        var lines: [[[String: Any]]] = []
        for jobs in ["1", "4"] {
            let folder = directory.file("out-\(jobs)")
            let run = try runCLI(["--json", "--jobs", jobs] + paths + ["--output-dir", folder])
            XCTAssertEqual(run.status, 65, "the status of the first failing input, in input order: \(run.stderr)")
            XCTAssertEqual(run.stderr, "")
            let objects = try run.stdout.split(separator: "\n").map {
                try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            XCTAssertEqual(objects.map { $0["input"] as? String }, paths, "one object per input, in input order")
            for (index, object) in objects.enumerated() {
                XCTAssertEqual(object["status"] as? String, failing.contains(index) ? "error" : "ok", "\(index)")
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).count, paths.count - 2)
            lines.append(objects)
        }
        // The same results either way, but for the timing and memory figures.
        let volatile: Set<String> = ["seconds", "peak_memory_kib", "output"]
        for (serial, parallel) in zip(lines[0], lines[1]) {
            XCTAssertEqual(serial.keys.sorted(), parallel.keys.sorted())
            for key in serial.keys where !volatile.contains(key) {
                XCTAssertEqual(serial[key] as? NSObject, parallel[key] as? NSObject, key)
            }
        }
        for (index, path) in paths.enumerated() where !failing.contains(index) {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent + ".m4a"
            XCTAssertEqual(readFile(directory.file("out-1/" + name)), readFile(directory.file("out-4/" + name)),
                           "\(name): the same bytes from a parallel run")
        }
    }

    func testParallelTextLinesErrorsAndSummaryInInputOrder() throws {
        let (paths, failing) = inputs()
        let folder = directory.file("out")
        let run = try runCLI(["-j", "3"] + paths + ["--output-dir", folder])
        XCTAssertEqual(run.status, 65, run.stderr)
        let wrote = run.stdout.split(separator: "\n").map(String.init)
        let expected = paths.enumerated().filter { !failing.contains($0.offset) }.map { index, _ in
            String(format: "wrote \(folder)/in%02d.m4a:", index)
        }
        XCTAssertEqual(wrote.count, expected.count, run.stdout)
        for (line, prefix) in zip(wrote, expected) {
            XCTAssertTrue(line.hasPrefix(prefix), "\(line) should start \(prefix)")
        }
        let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("extract-audio: error: ") }
        XCTAssertEqual(errors.count, 2, run.stderr)
        XCTAssertTrue(errors.first?.contains(paths[3]) == true, "the corrupt input's error first: \(run.stderr)")
        XCTAssertTrue(errors.last?.contains(paths[7]) == true, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix("extract-audio: 10 of 12 extracted, 2 failed\n"), run.stderr)
    }

    func testJobsIsABatchOption() throws {
        let input = directory.write("in.mp4", SyntheticMovie().build())
        for arguments in [["--jobs", "0", input, "-o", directory.file("o")],
                          ["--jobs", "many", input, "-o", directory.file("o")],
                          ["--jobs", "2", input, directory.file("one.m4a")],
                          ["probe", "--jobs", "2", input]] {
            let run = try runCLI(arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("--jobs"), run.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("one.m4a")))
    }
}
