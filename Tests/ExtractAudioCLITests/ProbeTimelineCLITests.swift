import Foundation
import TestSupport
import XCTest

/// `probe` of a fragmented file whose tracks start late on the decode clock (issue 32):
/// its `start_time` and durations count on the one timeline cuts use
/// (`CutPlan.timelineOffsets(of:)`), not on each track's own clock (it said 30.98 s for
/// `hls-late.mp4`, a 1 s segment, where a cut is checked against 1.15 s). The oracle is
/// ffprobe's packets, edits applied: a track starts at its first `dts_time` plus its edit's
/// media time (FFmpeg 5.1 shifts a fragmented track by that media time, and so presents an
/// AAC priming the edit skips, which its `start_time` then counts), ends at its latest
/// `pts_time + duration_time`; the file's time 0 is where its first track starts. ffprobe's
/// own stream `duration` is no reference here: in fragments it is the end decode time
/// counted from 0 (68 s for `dash-late.mp4`, a 2 s segment at 66 s); `Scripts/probe_check.py`
/// checks that rule and this one over every fragmented fixture and the corpus.
final class ProbeTimelineCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffprobe"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// The first non-empty edit's media time of each `elst` in `bytes`, in file order (one per
    /// `trak` of these fixtures), read from the bytes as ISO/IEC 14496-12 § 8.6.6 lays
    /// them out: not by our parser.
    func mediaTimes(_ bytes: [UInt8]) -> [Int64] {
        func integer(_ at: Int, _ size: Int) -> Int64 {
            bytes[at..<(at + size)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }
        var times: [Int64] = []
        var at = 4
        while at + 8 <= bytes.count {
            defer { at += 1 }
            guard bytes[at..<(at + 4)].elementsEqual("elst".utf8) else { continue }
            let version = Int(bytes[at + 4])
            let count = Int(integer(at + 8, 4))
            let entrySize = version == 1 ? 20 : 12
            var time: Int64 = 0
            for n in 0..<count {
                let entry = at + 12 + n * entrySize
                let fieldSize = version == 1 ? 8 : 4
                var media = integer(entry + fieldSize, fieldSize)
                if version == 0, media >= 1 << 31 { media -= 1 << 32 }
                if media >= 0 {
                    time = media
                    break
                }
            }
            times.append(time)
        }
        return times
    }

    /// ffprobe's timeline of `path`: the file's origin, each stream's start and end from it,
    /// and ffprobe's format start_time.
    func timeline(_ path: String) throws -> (origin: Double, spans: [(start: Double, end: Double)], format: Double) {
        let run = try runTool("ffprobe", ["-v", "error", "-show_entries",
                                          "packet=stream_index,pts_time,dts_time,duration_time:"
                                          + "stream=index,time_base:format=start_time", "-of", "json", path])
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        let times = mediaTimes(readFile(path))
        XCTAssertEqual(times.count, streams.count, "one elst per trak")
        var spans: [(start: Double, end: Double)?] = Array(repeating: nil, count: streams.count)
        for packet in try XCTUnwrap(json["packets"] as? [[String: Any]]) {
            guard let index = packet["stream_index"] as? Int, index < streams.count,
                  let dts = (packet["dts_time"] as? String).flatMap(Double.init) else { continue }
            let base = try XCTUnwrap((streams[index]["time_base"] as? String)?.split(separator: "/").last
                .flatMap { Double($0) })
            let start = spans[index]?.start ?? dts + Double(times[index]) / base
            var end = spans[index]?.end ?? -.infinity
            if let pts = (packet["pts_time"] as? String).flatMap(Double.init),
               let duration = (packet["duration_time"] as? String).flatMap(Double.init) {
                end = max(end, pts + duration)
            }
            spans[index] = (start, end)
        }
        let known = try spans.map { try XCTUnwrap($0, "a stream without packets") }
        let origin = try XCTUnwrap(known.map(\.start).min())
        let format = try XCTUnwrap(((json["format"] as? [String: Any])?["start_time"] as? String).flatMap(Double.init))
        return (origin, known.map { ($0.start - origin, $0.end - origin) }, format)
    }

    func check(_ name: String, priming: Double) throws {
        let path = fixture("timeline/" + name)
        let oracle = try timeline(path)
        let outcome = try runCLI(["probe", "--json", path])
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        // The edits count in milliseconds (the movie timescale of both files); where a track
        // starts lies on its own tick.
        let tick = 0.001 + 1e-6
        let start = try XCTUnwrap(json["start_time"] as? Double)
        XCTAssertEqual(start, oracle.origin, accuracy: 1e-6, "\(name): the first track's start")
        // ffprobe's format start_time is that, but for the priming FFmpeg presents in fragments.
        XCTAssertEqual(start - oracle.format, priming, accuracy: 1e-6, "\(name): ffprobe's start_time")
        let end = try XCTUnwrap(oracle.spans.map(\.end).max())
        XCTAssertEqual(try XCTUnwrap(json["duration"] as? Double), end, accuracy: tick, "\(name): the file's end")
        let tracks = try XCTUnwrap(json["tracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.count, oracle.spans.count)
        for (track, span) in zip(tracks, oracle.spans) {
            XCTAssertEqual(try XCTUnwrap(track["start_time"] as? Double), oracle.origin + span.start, accuracy: 1e-6,
                           "\(name) track \(track["id"] ?? "?"): its start")
            XCTAssertEqual(try XCTUnwrap(track["duration"] as? Double), span.end, accuracy: tick,
                           "\(name) track \(track["id"] ?? "?"): its end on the file's timeline")
        }
        // The range a cut accepts is the same: past the end is refused naming that length.
        let refused = try runCLI(["remux", path, directory.file("cut.mp4"), "--from", "50", "--to", "100"])
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(String(format: "lasts %.3f s", end)), refused.stderr)
    }

    /// An HLS segment saved with its init segment: samples from 30.828 s (the audio) and
    /// 30.9 s (the video), 1 s of each. probe said 30.980 s.
    func testHLSSegmentLastsFromItsFirstTrackOnTheFragmentsClock() throws {
        try check("hls-late.mp4", priming: 0)
    }

    /// A DASH stream's segment at 66 s whose audio edit skips 1024 samples of priming,
    /// which ffprobe's start_time counts (65.921 s; the file starts at 65.945 s). probe said 2.080 s.
    func testDASHSegmentStartsWhereItsFirstTrackIsPresented() throws {
        try check("dash-late.mp4", priming: 1024.0 / 44100)
    }
}
