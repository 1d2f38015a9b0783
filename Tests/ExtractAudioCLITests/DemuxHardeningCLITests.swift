import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Issue 11 from the command line: the edit-list trap (16), empty outputs (5), probe
/// agreeing with extraction (6) and probe's own additions (15: several files, non-MP4
/// inputs, rotation, languages in the alternate-track note).
final class DemuxHardeningCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    // MARK: - Point 15: probe's additions

    /// Runs a tool (ffmpeg, ffprobe) and returns its stdout; skips when it is missing.
    func tool(_ name: String, _ arguments: [String]) throws -> String {
        let path = "/usr/bin/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else { throw missingOracle(name) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(name) \(arguments)")
        return text
    }

    func testProbeShowsVideoRotationAsFFprobeSeesIt() throws {
        let plain = directory.file("plain.mp4")
        _ = try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:d=0.2", "-f", "lavfi",
                                "-i", "sine=d=0.2", "-c:v", "mpeg4", "-c:a", "aac", "-shortest", plain])
        for rotate in [0, 90, 180, 270] {
            let rotated = directory.file("rotated-\(rotate).mp4")
            _ = try tool("ffmpeg", ["-v", "error", "-y", "-i", plain, "-c", "copy", "-metadata:s:v:0",
                                    "rotate=\(rotate)", rotated])
            // ffprobe gives the display matrix's angle counterclockwise; probe says clockwise.
            let side = try tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                            "stream_side_data=rotation", "-of", "csv=p=0", rotated])
            let counterclockwise = Int(side.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            let expected = ((-counterclockwise) % 360 + 360) % 360
            let json = try runCLI(["probe", "--json", rotated])
            XCTAssertEqual(json.status, 0, json.stderr)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            let video = (object?["tracks"] as? [[String: Any]])?.first { $0["kind"] as? String == "video" }
            XCTAssertEqual(video?["rotation"] as? Int, expected, "rotate=\(rotate): ffprobe \(counterclockwise)")
            let text = try runCLI(["probe", rotated])
            XCTAssertEqual(text.stdout.contains("rotated \(expected)°"), expected != 0, text.stdout)
        }
    }

    func testProbeRecognisesOtherFormatsAsExtractionDoes() throws {
        for ext in ["wav", "mkv", "mp3", "aac", "ts"] {
            let input = directory.file("sound.\(ext)")
            _ = try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.3"]
                         + (ext == "mkv" || ext == "ts" ? ["-c:a", "aac"] : []) + [input])
            let extract = try runCLI([input, directory.file("sound-\(ext).m4a")])
            let probe = try runCLI(["probe", input])
            XCTAssertEqual(probe.status, extract.status, "\(ext): \(probe.stderr)")
            XCTAssertEqual(probe.status, 65)
            XCTAssertTrue(probe.stderr.contains("it looks like"), "\(ext): \(probe.stderr)")
            let kind = { (text: String) in text.components(separatedBy: "it looks like").last?
                .components(separatedBy: ".").first }
            XCTAssertEqual(kind(probe.stderr), kind(extract.stderr), ext)
        }
    }

    func testProbeTakesSeveralFiles() throws {
        let good = fixture("aac-h264-faststart.mp4")
        let other = fixture("aac-two-audio.mp4")
        let bad = fixture("corrupt/not-mp4.bin")
        let text = try runCLI(["probe", good, bad, other])
        XCTAssertEqual(text.status, 65, "the first failure's status")
        XCTAssertTrue(text.stdout.contains("file:       \(good)") && text.stdout.contains("file:       \(other)"),
                      text.stdout)
        XCTAssertTrue(text.stderr.contains("it looks like"), text.stderr)
        let json = try runCLI(["probe", "--json", good, other])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertEqual(json.stdout.components(separatedBy: "\"file\"").count - 1, 2, json.stdout)
        XCTAssertEqual(try runCLI(["probe", good]).stdout.contains("file:"), false, "one file: as before")
    }

    func testAlternateTrackNoteNamesLanguages() throws {
        let input = directory.file("two-languages.mp4")
        _ = try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.3:f=440", "-f", "lavfi", "-i",
                                "sine=d=0.3:f=660", "-map", "0", "-map", "1", "-c:a", "aac",
                                "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", input])
        let languages = try tool("ffprobe", ["-v", "error", "-show_entries", "stream=index:stream_tags=language",
                                             "-of", "csv=p=0", input])
            .split(separator: "\n").map { $0.split(separator: ",").last.map(String.init) ?? "" }
        XCTAssertEqual(languages, ["eng", "fra"])
        let run = try runCLI([input, directory.file("two-languages.m4a")])
        XCTAssertEqual(run.status, 0, run.stderr)
        for (index, language) in languages.enumerated() {
            XCTAssertTrue(run.stderr.contains("\(index + 1) (\(language))"), run.stderr)
        }
    }

    // MARK: - Points 5, 6 and 16 from the command line

    func testEditListTrapAndEmptyTrackFromTheCommandLine() throws {
        var synthetic = SyntheticMovie(sampleCount: 10)
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 300_000_000_000_000_000, mediaTime: Int64.max)])
        let input = directory.write("elst.mp4", synthetic.build())
        for extra in [[], ["--no-metadata"]] {
            let run = try runCLI(extra + ["--overwrite", "--json", input, directory.file("elst.m4a")])
            XCTAssertEqual(run.reason, .exit)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.contains("\"duration\": 0.233"), run.stdout)
            XCTAssertTrue(run.stdout.contains("the edit list of moov/trak[1] was ignored"), run.stdout)
            let plain = try runCLI(extra + ["--overwrite", input, directory.file("elst.m4a")])
            XCTAssertEqual(plain.status, 0, plain.stderr)
            XCTAssertTrue(plain.stderr.contains("warning: \(input): the edit list of moov/trak[1] was ignored"), plain.stderr)
        }
        let probe = try runCLI(["probe", input])
        XCTAssertEqual(probe.status, 0)
        XCTAssertTrue(probe.stdout.contains("0.232 s") && probe.stdout.contains("was ignored"), probe.stdout)

        var empty = SyntheticFragmentedMovie(fragments: [])
        empty.trexDefaults = (1024, 0)
        let dash = directory.write("dash.mp4", empty.build())
        let run = try runCLI([dash, directory.file("dash.m4a")])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertTrue(run.stderr.contains("audio track 1") && run.stderr.contains("no samples"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("dash.m4a")))
        let json = try runCLI(["probe", "--json", dash])
        XCTAssertTrue(json.stdout.contains("\"extractable\": false") || json.stdout.contains("\"extractable\":false"),
                      json.stdout)
    }
}
