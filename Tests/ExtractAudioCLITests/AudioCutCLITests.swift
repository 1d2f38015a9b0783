import Foundation
import TestSupport
import XCTest

/// Audio cuts of extraction (issue 14): `--from/--to/--duration`, `--output-dir`,
/// `--salvage`, `--split-chapters`, and `iTunSMPB` — each read back with ffprobe/ffmpeg.
final class AudioCutCLITests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg", "ffprobe"])
    }

    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    func tool(_ name: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try oraclePath(name))
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    func probe(_ path: String, _ what: [String]) throws -> [String: Any] {
        let data = try tool("ffprobe", ["-v", "error"] + what + ["-of", "json", path])
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func duration(_ path: String) throws -> Double {
        let format = try probe(path, ["-show_format"])["format"] as? [String: Any]
        return Double(format?["duration"] as? String ?? "") ?? -1
    }

    /// Decoded samples (first channel, 16-bit) as FFmpeg decodes them, edit list applied.
    func decoded(_ path: String) throws -> [Int16] {
        let data = try tool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1",
                                       "-f", "s16le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    func testCutStartsWithTheSourceSampleAtFromAndLastsTheRange() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let output = directory.file("cut.m4a")
        let run = try runCLI([input, output, "--from", "0.5", "--to", "2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try duration(output), 1.5)
        let source = try decoded(input)
        let cut = try decoded(output)
        let offset = 22050  // 0.5 s at 44.1 kHz.
        // The same samples, to the rounding of FFmpeg's float decoder and downmix (±2 of 32768);
        // off by one sample, the difference would be hundreds.
        let difference = zip(cut.prefix(4096), source[offset..<(offset + 4096)]).map { abs(Int($0) - Int($1)) }
        XCTAssertLessThanOrEqual(difference.max() ?? .max, 2)
        XCTAssertTrue((66150...(66150 + 1024)).contains(cut.count), "\(cut.count)")  // FFmpeg: up to a frame more.
        let brands = try probe(output, ["-show_format"])["format"] as? [String: Any]
        let whole = directory.file("whole.m4a")
        XCTAssertEqual(try runCLI([input, whole]).status, 0)
        let wholeBrands = try probe(whole, ["-show_format"])["format"] as? [String: Any]
        XCTAssertEqual((brands?["tags"] as? [String: String])?["compatible_brands"],
                       (wholeBrands?["tags"] as? [String: String])?["compatible_brands"])
    }

    func testDurationIsTheSameCutAsTo() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let a = directory.file("a.m4a")
        let b = directory.file("b.m4a")
        XCTAssertEqual(try runCLI([input, a, "--from", "0:00.5", "--duration", "1.25"]).status, 0)
        XCTAssertEqual(try runCLI([input, b, "--from", "0.5", "--to", "1.75"]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: a), FileManager.default.contents(atPath: b))
        XCTAssertEqual(try duration(a), 1.25)
    }

    /// The rewritten iTunSMPB describes the cut: its valid samples are to − from, and
    /// priming + valid + padding is what the packets hold (ffprobe's packet count).
    func testGaplessItemDescribesTheCut() throws {
        let input = fixture("meta-gapless-itunsmpb.m4a")
        let output = directory.file("gapless.m4a")
        XCTAssertEqual(try runCLI([input, output, "--from", "0.5", "--duration", "1"]).status, 0)
        let format = try probe(output, ["-show_format"])["format"] as? [String: Any]
        let smpb = try XCTUnwrap((format?["tags"] as? [String: String])?["iTunSMPB"])
        let fields = smpb.split(separator: " ").compactMap { UInt64($0, radix: 16) }
        XCTAssertEqual(fields.count, 12, smpb)
        let (priming, padding, valid) = (fields[1], fields[2], fields[3])
        XCTAssertEqual(valid, 44100)
        let packets = try probe(output, ["-show_packets"])["packets"] as? [[String: Any]] ?? []
        XCTAssertEqual(priming + valid + padding, UInt64(packets.count) * 1024)
        XCTAssertLessThan(padding, 1024)
    }

    func testOutputDirectoryCutsEveryInput() throws {
        let inputs = [fixture("aac-h264-faststart.mp4"), fixture("aac-48k-mono.mp4")]
        let folder = directory.file("out")
        let run = try runCLI(inputs + ["--output-dir", folder, "--from", "1", "--to", "1.5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        for name in ["aac-h264-faststart.m4a", "aac-48k-mono.m4a"] {
            XCTAssertEqual(try duration(folder + "/" + name), 0.5, name)
        }
    }

    func testSalvageCutsATruncatedRecording() throws {
        let output = directory.file("rescued.m4a")
        let run = try runCLI([fixture("aac-h264-faststart-truncated.mp4"), output, "--salvage", "--from", "0.5",
                              "--to", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try duration(output), 0.5)
    }

    /// One file per chapter, named and timed as ffprobe lists the chapters.
    func testSplitChaptersWritesOneFilePerChapter() throws {
        let input = fixture("meta-chapters-both.mp4")
        let folder = directory.file("chapters")
        let run = try runCLI([input, "--split-chapters", "--output-dir", folder])
        XCTAssertEqual(run.status, 0, run.stderr)
        let chapters = try probe(input, ["-show_chapters"])["chapters"] as? [[String: Any]] ?? []
        XCTAssertEqual(chapters.count, 3)
        for (n, chapter) in chapters.enumerated() {
            let title = (chapter["tags"] as? [String: String])?["title"] ?? ""
            let path = folder + "/0\(n + 1) - \(title).m4a"
            let expected = (Double(chapter["end_time"] as? String ?? "") ?? 0)
                - (Double(chapter["start_time"] as? String ?? "") ?? 0)
            XCTAssertEqual(try duration(path), expected, accuracy: 0.001, path)
        }
        let usage = try runCLI([input, directory.file("x.m4a"), "--split-chapters"])
        XCTAssertEqual(usage.status, 64)
        let noChapters = try runCLI([fixture("aac-48k-mono.mp4"), "--split-chapters", "--output-dir", folder + "2"])
        XCTAssertEqual(noChapters.status, 64, noChapters.stderr)
    }

    func testEmptyRangeIsAUsageErrorWithNothingLeft() throws {
        let output = directory.file("none.m4a")
        for arguments in [["--from", "2", "--to", "1"], ["--from", "5"], ["--duration", "0"]] {
            let run = try runCLI([fixture("aac-h264-faststart.mp4"), output] + arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
            XCTAssertEqual(directory.contents, [], "\(arguments)")
        }
    }
}
