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

    /// Usage errors and broken tables: one line on stderr, nothing on stdout.
    func testErrors() throws {
        let unknown = try runCLI(["probe", "--packets", "--track-id", "9", fixture("aac-h264-faststart.mp4")])
        XCTAssertEqual(unknown.status, 79, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("no track with ID 9 (its tracks: 1, 2)"), unknown.stderr)
        XCTAssertEqual(try runCLI(["probe", "--track-id", "1", fixture("aac-h264-faststart.mp4")]).status, 64)
        XCTAssertEqual(try runCLI(["probe", "--packets", fixture("aac-h264-faststart.mp4"),
                                   fixture("video-only.mp4")]).status, 64)
        let broken = try runCLI(["probe", "--packets", fixture("corrupt/stsz-count-mismatch.mp4")])
        XCTAssertEqual(broken.status, 65)
        XCTAssertEqual(broken.stdout, "", "nothing printed before the tables are checked")
        XCTAssertTrue(broken.stderr.contains("stsz"), broken.stderr)
    }
}
