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

    typealias Run = CLIRun

    /// The executable, built next to the test bundle (the test target depends on it).
    static var executable: String { cliExecutable }

    func run(_ arguments: [String]) throws -> Run {
        let result = try runCLI(arguments)
        XCTAssertEqual(result.reason, .exit, "ended by a signal")
        return result
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
        XCTAssertEqual(result.stderr, "extract-audio: warning: \(input): the input has no video track: it is already "
                       + "audio-only, and the output holds the same audio repackaged\n")
        XCTAssertTrue(result.stdout.hasPrefix("wrote \(output): mp4a.40.2, 44100 Hz, 2 ch"), result.stdout)
        XCTAssertEqual(try Movie(reading: MemoryByteSource(readFile(output))).tracks.count, 1)
    }

    func testHelpAndVersion() throws {
        let help = try run(["--help"])
        XCTAssertEqual(help.status, 0)
        for text in ["Usage:", "--track N", "--track-id", "--overwrite", "--salvage", "probe", "Examples:",
                     "Exit status:", "79 no audio track"] {
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

    func testProbeShowsEveryTrack() throws {
        let result = try run(["probe", fixture("aac-two-audio.mp4")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("brands:     isom"), lines[0])
        let table = Array(lines.drop { !$0.hasPrefix("#") })
        XCTAssertEqual(table.count, 4, result.stdout)
        XCTAssertEqual(table[1].split(separator: " ").prefix(3), ["1", "video", "avc1.42c00b"])
        XCTAssertTrue(table[2].hasPrefix("a:0  2   audio  mp4a.40.2"), table[2])
        XCTAssertTrue(table[3].contains("no"), "the second audio track is disabled: \(table[3])")
        XCTAssertEqual(try run(["--list", fixture("aac-two-audio.mp4")]).stdout, result.stdout)
    }

    func testProbeJSON() throws {
        let result = try run(["probe", "--json", fixture("aac-quicktime.mov")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((json["brands"] as? [String: Any])?["major"] as? String, "qt  ")
        XCTAssertEqual(json["fragmented"] as? Bool, false)
        let tracks = try XCTUnwrap(json["tracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.map { $0["kind"] as? String }, ["video", "audio"])
        let audio = tracks[1]
        XCTAssertEqual(audio["codec"] as? String, "mp4a.40.2")
        XCTAssertEqual(audio["sample_rate"] as? Int, 44100)
        XCTAssertEqual(audio["channels"] as? Int, 2)
        XCTAssertEqual(audio["priming_samples"] as? Int, 1024)
        XCTAssertEqual(audio["sample_count"] as? Int, 131)
        XCTAssertEqual(try XCTUnwrap(audio["duration"] as? Double), 3.0, accuracy: 1e-9)
        XCTAssertEqual(tracks[0]["width"] as? Int, 160)
    }

    func testTrackChoice() throws {
        let input = fixture("aac-two-audio.mp4")
        let second = try run(["--track", "1", input, directory.file("second.m4a")])
        XCTAssertEqual(second.status, 0, second.stderr)
        let byID = try run(["--track-id", "3", input, directory.file("byid.m4a")])
        XCTAssertEqual(byID.status, 0, byID.stderr)
        XCTAssertEqual(readFile(directory.file("second.m4a")), readFile(directory.file("byid.m4a")))
        XCTAssertTrue(byID.stderr.contains("disabled"), byID.stderr)
        let notAudio = try expectFailure(79, ["--track-id", "1", input, directory.file("x.m4a")])
        XCTAssertTrue(notAudio.contains("not audio"), notAudio)
        try expectFailure(79, ["--track-id", "9", input, directory.file("x.m4a")])
        try expectFailure(64, ["--track", "0", "--track-id", "2", input, directory.file("x.m4a")])
    }

    func testBatchContinuesPastAFailingFile() throws {
        let outputs = directory.file("outputs")
        try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: false)
        let good = directory.write("first.mp4", SyntheticMovie().build())
        var video = SyntheticMovie()
        video.handler = .vide
        let bad = directory.write("silent.mp4", video.build())
        let alsoGood = directory.write("third.mov", SyntheticMovie(sampleCount: 4).build())
        let result = try run([good, bad, alsoGood, "--output-dir", outputs])
        XCTAssertEqual(result.status, 79, "the first failure's status")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outputs).sorted(), ["first.m4a", "third.m4a"])
        XCTAssertTrue(result.stderr.contains("silent.mp4 has no audio track"), result.stderr)
        XCTAssertTrue(result.stderr.hasSuffix("extract-audio: 2 of 3 extracted, 1 failed\n"), result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 2)
    }

    func testJSONOutputForResultsAndErrors() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        var video = SyntheticMovie()
        video.handler = .vide
        let bad = directory.write("bad.mp4", video.build())
        let result = try run(["--json", good, bad, "--output-dir", directory.path])
        XCTAssertEqual(result.status, 79)
        XCTAssertEqual(result.stderr, "")
        let objects = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(objects.count, 2)
        XCTAssertEqual(objects[0]["status"] as? String, "ok")
        XCTAssertEqual(objects[0]["output"] as? String, directory.file("good.m4a"))
        XCTAssertEqual(objects[0]["codec"] as? String, "mp4a.40.2")
        XCTAssertEqual(objects[0]["packets"] as? Int, 10)
        XCTAssertEqual(objects[0]["bytes"] as? Int, readFile(directory.file("good.m4a")).count)
        XCTAssertNotNil(objects[0]["seconds"] as? Double)
        XCTAssertEqual(objects[1]["status"] as? String, "error")
        let error = try XCTUnwrap(objects[1]["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? String, "noAudioTrack")
        XCTAssertEqual(error["exit_status"] as? Int, 79)

        var corrupt = SyntheticMovie()
        corrupt.sampleToChunk.entries[0].firstChunk = 0
        let located = try run(["--json", directory.write("c.mp4", corrupt.build()), directory.file("c.m4a")])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(located.stdout.utf8)) as? [String: Any])
        let detail = try XCTUnwrap(object["error"] as? [String: Any])
        XCTAssertEqual(detail["box_path"] as? String, "moov/trak[1]/mdia/minf/stbl/stsc")
        XCTAssertNotNil(detail["byte_offset"] as? Int)
        let usage = try run(["--json", "--bogus"])
        XCTAssertEqual(usage.status, 64)
        XCTAssertTrue(usage.stdout.contains("\"code\": \"usage\""), usage.stdout)
    }

    func testQuietPrintsOnlyErrors() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let result = try run(["--quiet", good, directory.file("q.m4a")])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout + result.stderr, "")
        try expectFailure(73, ["-q", good, directory.file("q.m4a")])
    }

    func testCommonMistakesGetHelpfulMessages() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let wrongExtension = try expectFailure(64, [good, directory.file("song.mp3")])
        XCTAssertTrue(wrongExtension.contains("name it .m4a"), wrongExtension)
        let notMP4 = try expectFailure(65, [directory.write("clip.mkv", [0x1A, 0x45, 0xDF, 0xA3] + [UInt8](repeating: 1, count: 40)),
                                            directory.file("o.m4a")])
        XCTAssertTrue(notMP4.contains("Matroska"), notMP4)
        let several = try expectFailure(64, [good, good, good])
        XCTAssertTrue(several.contains("--output-dir"), several)
    }
}

struct CLIRun {
    var status: Int32
    var stdout: String
    var stderr: String
    var reason: Process.TerminationReason
}

/// The executable, built next to the test bundle (the test target depends on it).
let cliExecutable: String = {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [bundle.appendingPathComponent("extract-audio").path,
                      URL(fileURLWithPath: fixturesDirectory).deletingLastPathComponent()
                          .appendingPathComponent(".build/debug/extract-audio").path]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
}()

/// Runs the tool and collects its exit status and output.
func runCLI(_ arguments: [String]) throws -> CLIRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: cliExecutable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIRun(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                  stderr: String(decoding: stderr, as: UTF8.self), reason: process.terminationReason)
}
