import Foundation
import TestSupport
import XCTest

/// `extract-audio probe --packets`: the reader's samples as ffprobe lists its packets
/// (stored by Scripts/packets-conformance.py --write from ffprobe -ignore_editlist 1).
final class ProbePacketsCLITests: XCTestCase {
    struct Expectation: Decodable {
        struct Track: Decodable {
            var track_id: Int
            var packets: [[Int64]]?
        }
        var tracks: [Track]
    }

    /// Lines of `--json`, one object per sample, equal ffprobe's numbers field by field; the
    /// negative-ctts fixtures check FFmpeg's dts shift (mov.c's dts_shift), and that negative
    /// offsets in a version-0 `ctts` (Apple's encoders) are read as signed, as FFmpeg does.
    func testJSONLinesEqualFFprobePackets() throws {
        for name in ["video-bframes-negative-cts.mp4", "video-ctts-v0-negative.mp4", "video-bframes.mp4", "aac-h264-faststart.mp4",
                     "frag-tfdt-start.mp4"] {
            let result = try runCLI(["probe", "--packets", "--json", fixture(name)])
            XCTAssertEqual(result.status, 0, result.stderr)
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture("expected/packets/\(name).json")))
            let expected = try JSONDecoder().decode(Expectation.self, from: data)
            var got: [Int: [[Int64]]] = [:]
            for line in result.stdout.split(separator: "\n") {
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let id = try XCTUnwrap(object["track_id"] as? Int)
                XCTAssertEqual(object["index"] as? Int, got[id, default: []].count)
                got[id, default: []].append(["dts", "pts", "duration", "size", "offset"].map {
                    (object[$0] as? NSNumber)?.int64Value ?? -1
                } + [(object["sync"] as? Bool) == true ? 1 : 0])
            }
            for track in expected.tracks {
                XCTAssertEqual(got[track.track_id], track.packets, "\(name) track \(track.track_id)")
            }
        }
    }

    /// `--track-id` keeps one track; text lines carry the same fields.
    func testTrackIDAndTextLines() throws {
        let result = try runCLI(["probe", "--packets", "--track-id", "2", fixture("aac-h264-faststart.mp4")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        // ffprobe: stream 1 (track 2) has 131 packets, the first at pos 3296, 144 bytes.
        XCTAssertEqual(lines.count, 131)
        XCTAssertEqual(lines.first, "track_id=2 index=0 dts=0 pts=0 duration=1024 size=144 offset=3296 sync=1")
    }

    /// `--json` output split into packets per track (as `[dts, pts, duration, size, offset,
    /// sync]`) and problem objects (track ID to the problem's code).
    func parse(_ stdout: String) throws -> (packets: [Int: [[Int64]]], problems: [Int: String]) {
        var packets: [Int: [[Int64]]] = [:]
        var problems: [Int: String] = [:]
        for line in stdout.split(separator: "\n") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let id = try XCTUnwrap(object["track_id"] as? Int)
            if let problem = object["problem"] as? String {
                XCTAssertNil(packets[id], "the problem comes before the track's packets")
                XCTAssertFalse((object["reason"] as? String ?? "").isEmpty)
                problems[id] = problem
                continue
            }
            packets[id, default: []].append(["dts", "pts", "duration", "size", "offset"].map {
                (object[$0] as? NSNumber)?.int64Value ?? -1
            } + [(object["sync"] as? Bool) == true ? 1 : 0])
        }
        return (packets, problems)
    }

    /// One damaged part does not hide the rest (issue 20): every readable track is listed
    /// as ffprobe lists it (`-ignore_editlist 1 -show_packets`, stored without its partial
    /// packet of a sample cut by the end of the file), the damaged one as a problem object
    /// (and a line on stderr), and the command succeeds.
    func testDamagedFilesListWhatCanBeRead() throws {
        let cases: [(name: String, problems: [Int: String], listed: [Int])] = [
            ("damaged/audio-no-stsd.mp4", [2: "missingBox"], [1, 2]),
            ("damaged/second-moov.mp4", [:], [1, 2]),
            ("damaged/audio-chunk-in-moov.mp4", [2: "invalidSampleTable"], [1]),
            ("aac-h264-faststart-truncated.mp4", [1: "endOfFile", 2: "endOfFile"], [1, 2]),
        ]
        for (name, problems, listed) in cases {
            let result = try runCLI(["probe", "--packets", "--json", fixture(name)])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let (got, gotProblems) = try parse(result.stdout)
            XCTAssertEqual(gotProblems, problems, name)
            XCTAssertEqual(got.keys.sorted(), listed, name)
            let stored = fixture("expected/packets/\(name.split(separator: "/").last ?? "").json")
            let expected = try JSONDecoder().decode(Expectation.self, from: Data(contentsOf: URL(fileURLWithPath: stored)))
            for id in listed {
                let packets = try XCTUnwrap(expected.tracks.first { $0.track_id == id }?.packets, "\(name) \(id)")
                XCTAssertEqual(got[id], packets, "\(name) track \(id)")
            }
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
            XCTAssertEqual(warnings.count, max(problems.count, 1), "\(name): \(result.stderr)")
            if problems.isEmpty { XCTAssertTrue(result.stderr.contains("a second moov box, ignored"), result.stderr) }
        }
    }

    /// Usage errors, and files nothing can be listed from: one line on stderr, nothing on
    /// stdout, exit 65. A file with one broken track lists the others.
    func testErrors() throws {
        let unknown = try runCLI(["probe", "--packets", "--track-id", "9", fixture("aac-h264-faststart.mp4")])
        XCTAssertEqual(unknown.status, 79, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("no track with ID 9 (its tracks: 1, 2)"), unknown.stderr)
        XCTAssertEqual(try runCLI(["probe", "--track-id", "1", fixture("aac-h264-faststart.mp4")]).status, 64)
        XCTAssertEqual(try runCLI(["probe", "--packets", fixture("aac-h264-faststart.mp4"),
                                   fixture("video-only.mp4")]).status, 64)
        let oneBroken = try runCLI(["probe", "--packets", fixture("corrupt/stsz-count-mismatch.mp4")])
        XCTAssertEqual(oneBroken.status, 0, oneBroken.stderr)
        XCTAssertEqual(oneBroken.stdout.split(separator: "\n").count, 75, "the video track's packets")
        XCTAssertTrue(oneBroken.stderr.contains("track 2: none of its samples is listed"), oneBroken.stderr)
        XCTAssertTrue(oneBroken.stderr.contains("stsz"), oneBroken.stderr)
        for arguments in [["--track-id", "2", fixture("corrupt/stsz-count-mismatch.mp4")],
                          [fixture("corrupt/box-size-too-small.mp4")]] {
            let broken = try runCLI(["probe", "--packets"] + arguments)
            XCTAssertEqual(broken.status, 65, "\(arguments)")
            XCTAssertEqual(broken.stdout, "", "nothing can be listed: nothing printed")
            XCTAssertEqual(broken.stderr.split(separator: "\n").filter { !$0.contains("warning") }.count, 1,
                           broken.stderr)
        }
    }
}
