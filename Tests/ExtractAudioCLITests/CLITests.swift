import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The `extract-audio` executable as a user runs it: exit statuses, one-line messages,
/// `--help`, `--list`.
final class CLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable, built next to the test bundle (the test target depends on it).
    static let executable: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle.appendingPathComponent("extract-audio").path,
                          URL(fileURLWithPath: fixturesDirectory).deletingLastPathComponent()
                              .appendingPathComponent(".build/debug/extract-audio").path]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
    }()

    func run(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "ended by a signal")
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Runs, expects `status`, and checks the error is one line with the tool's prefix.
    @discardableResult
    func expectFailure(_ status: Int32, _ arguments: [String], file: StaticString = #filePath,
                       line: UInt = #line) throws -> String {
        let result = try run(arguments)
        XCTAssertEqual(result.status, status, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout, "", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("extract-audio: error: "), result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)", file: file,
                       line: line)
        return result.stderr
    }

    func testExtractsAndSaysWhatItWrote() throws {
        let input = directory.write("in.mp4", SyntheticMovie().build())
        let output = directory.file("out.m4a")
        let result = try run([input, output])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertTrue(result.stdout.hasPrefix("wrote \(output): mp4a.40.2, 44100 Hz, 2 ch"), result.stdout)
        XCTAssertEqual(try Movie(reading: MemoryByteSource(readFile(output))).tracks.count, 1)
    }

    func testHelpAndVersion() throws {
        let help = try run(["--help"])
        XCTAssertEqual(help.status, 0)
        for text in ["Usage:", "--track N", "--overwrite", "--list", "Examples:", "Exit status:", "79 no audio track"] {
            XCTAssertTrue(help.stdout.contains(text), "help lacks \(text)")
        }
        let version = try run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("extract-audio "))
    }

    func testUsageErrors() throws {
        try expectFailure(64, [])
        try expectFailure(64, ["only-one.mp4"])
        try expectFailure(64, ["a", "b", "c"])
        try expectFailure(64, ["--bogus", "a", "b"])
        try expectFailure(64, ["--track", "x", "a", "b"])
        try expectFailure(64, ["--track"])
        let input = directory.write("in.mp4", SyntheticMovie().build())
        try expectFailure(64, [input, input])
    }

    func testExitStatusForEachFailure() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        try expectFailure(66, [directory.file("missing.mp4"), directory.file("o.m4a")])
        let existing = directory.write("exists.m4a", [1, 2, 3])
        let message = try expectFailure(73, [good, existing])
        XCTAssertTrue(message.contains("already exists"), message)
        XCTAssertEqual(readFile(existing), [1, 2, 3])
        try expectFailure(73, [good, directory.file("no/such/dir/o.m4a")])

        var video = SyntheticMovie()
        video.handler = .vide
        try expectFailure(79, [directory.write("video.mp4", video.build()), directory.file("o.m4a")])
        try expectFailure(79, ["--track", "3", good, directory.file("o.m4a")])

        var pcm = SyntheticMovie()
        pcm.sampleEntries = [AudioSampleEntry.isoEntry(format: "lpcm", channelCount: 2, sampleRate: 48000, children: [])]
        let unsupported = try expectFailure(69, [directory.write("pcm.mov", pcm.build()), directory.file("o.m4a")])
        XCTAssertTrue(unsupported.contains("lpcm"), unsupported)

        var corrupt = SyntheticMovie()
        corrupt.sampleToChunk.entries[0].firstChunk = 0
        let invalid = try expectFailure(65, [directory.write("corrupt.mp4", corrupt.build()), directory.file("o.m4a")])
        XCTAssertTrue(invalid.contains("moov/trak[1]/mdia/minf/stbl/stsc at byte"), invalid)
        let noise = try expectFailure(65, [directory.write("noise.bin", [UInt8](repeating: 7, count: 100)),
                                           directory.file("o.m4a")])
        XCTAssertTrue(noise.contains("not an MP4/MOV/M4A file"), noise)
        XCTAssertFalse(directory.contents.contains { $0.contains("o.m4a") })
    }

    func testOverwrite() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let existing = directory.write("exists.m4a", [1, 2, 3])
        let result = try run(["--overwrite", good, existing])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertGreaterThan(readFile(existing).count, 3)
    }

    func testListShowsEveryTrack() throws {
        let input = directory.write("in.mp4", SyntheticMovie().build())
        let result = try run(["--list", input])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].hasPrefix("#    ID  KIND"), String(lines[0]))
        XCTAssertTrue(lines[1].hasPrefix("a:0  1   audio  mp4a"), String(lines[1]))
    }
}
