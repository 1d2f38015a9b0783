import Foundation
import TestSupport
import XCTest

/// Cuts of fragmented files whose tracks start late on the decode clock (issue 32, point 3):
/// `Fixtures/timeline/` (made by `Scripts/make-timeline-fixtures.sh`) and `frag-tfdt-start.mp4`.
/// The range counts from the file's start, where its first track starts (its first decode
/// time and empty edits), for every track alike: in these files the `start_time` `ffmpeg -ss`
/// counts from (their first track shows its first sample at once, no priming skipped; see
/// `CutPlan.timelineOffsets(of:)` for where FFmpeg differs). The oracle is ffprobe: each packet of the cut,
/// matched to the source's by its data hash, must be presented at its source time on the
/// file's clock (FFmpeg's pts minus the file's `start_time`) minus `--from`. Both players'
/// decodes are checked by `Scripts/cut-conformance.py` (its `timeline/` checks).
final class FragmentTimelineCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffprobe"])
    }

    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    struct Packet {
        var kind: String
        var time: Double
        var hash: String
        var discarded: Bool
    }

    /// ffprobe's packets of `path` (pts in seconds, edit lists applied as FFmpeg applies them)
    /// and the file's start_time.
    func packets(_ path: String) throws -> (packets: [Packet], start: Double) {
        let run = try runTool("ffprobe", ["-v", "error", "-show_entries",
                                          "packet=stream_index,pts_time,flags,data_hash:stream=index,codec_type:"
                                          + "format=start_time", "-show_data_hash", "MD5", "-of", "json", path])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let streams = object["streams"] as? [[String: Any]] ?? []
        var kinds: [Int: String] = [:]
        for stream in streams {
            kinds[stream["index"] as? Int ?? -1] = stream["codec_type"] as? String
        }
        let list = (object["packets"] as? [[String: Any]] ?? []).compactMap { packet -> Packet? in
            guard let index = packet["stream_index"] as? Int, let kind = kinds[index],
                  let time = Double(packet["pts_time"] as? String ?? ""), let hash = packet["data_hash"] as? String
            else { return nil }
            return Packet(kind: kind, time: time, hash: hash,
                          discarded: (packet["flags"] as? String ?? "").contains("D"))
        }
        let start = Double((object["format"] as? [String: Any])?["start_time"] as? String ?? "") ?? .nan
        return (list, start)
    }

    /// Cuts `name` to [from, to) and checks every presented packet's time against the
    /// source's on the file's clock. Audio: within a tick (0.05 ms), the first presented
    /// packet aside (FFmpeg gives it the edit's start). Video: FFmpeg 5.1 drops
    /// a frame that starts before the edit and moves the next one to 0, so its times may all
    /// be early by one same amount, less than a frame (40 ms here); nothing else.
    func checkCut(_ name: String, from: String, to: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = fixture(name)
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", from, "--to", to, "--overwrite"])
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        let source = try packets(input)
        let cut = try packets(output)
        let a = try XCTUnwrap(Double(from))
        XCTAssertEqual(Set(cut.packets.map(\.kind)), ["video", "audio"], "both tracks are cut", file: file, line: line)
        var times: [String: [Double]] = [:]
        for packet in source.packets {
            times["\(packet.kind) \(packet.hash)", default: []].append(packet.time - source.start)
        }
        var errors: [String: [Double]] = [:]
        // FFmpeg moves the audio packet the edit starts in to the edit's start (mov.c skips
        // the samples before it): that one is measured by the others.
        let straddling = cut.packets.firstIndex { $0.kind == "audio" && !$0.discarded }
        for (index, packet) in cut.packets.enumerated() where !packet.discarded && index != straddling {
            let candidates = times["\(packet.kind) \(packet.hash)"] ?? []
            let wanted = packet.time + a
            guard let nearest = candidates.min(by: { abs($0 - wanted) < abs($1 - wanted) }) else {
                XCTFail("a \(packet.kind) packet of the cut is not the source's", file: file, line: line)
                continue
            }
            errors[packet.kind, default: []].append(nearest - wanted)
        }
        let audio = try XCTUnwrap(errors["audio"], file: file, line: line)
        XCTAssertLessThan(audio.map(abs).max() ?? 1, 0.00005, "audio on the file's clock", file: file, line: line)
        let video = try XCTUnwrap(errors["video"], file: file, line: line)
        let shift = video.min() ?? 1
        XCTAssertGreaterThan(shift, -0.00005, "video never late", file: file, line: line)
        XCTAssertLessThan(shift, 0.04, "video early by less than a frame (FFmpeg's drop)", file: file, line: line)
        XCTAssertLessThan((video.max() ?? 1) - shift, 0.0001, "video moved as one", file: file, line: line)
    }

    /// An HLS segment saved alone with its init segment: the stream starts at 29.9 s (the
    /// edits' empty 29.9 s and 29.876 s) and the segment at 1 s (its tfdt). The cut used to
    /// leave the video out ("presents nothing between 0.300 and 0.700 s") and place the
    /// audio 29.9 s late; on the file's clock both are there.
    func testHLSSegmentSavedAloneIsCutOnTheFilesClock() throws {
        try checkCut("timeline/hls-late.mp4", from: "0.3", to: "0.7")
        try checkCut("timeline/hls-late.mp4", from: "0.312", to: "0.9")  // On a video frame's start.
        try checkCut("timeline/hls-late.mp4", from: "0", to: "0.5")
    }

    /// Every tfdt 90000 ticks late in each track's own timescale: the audio (2 s) starts at
    /// 2.04 s, the video at 7.03 s, 4.99 s after it, as FFmpeg places them. The cut used to
    /// start both at 0: now the first 0.4 s hold the audio alone, and a cut over the audio's
    /// end and the video's start keeps the gap between them.
    func testTracksWhoseFirstDecodeTimesDifferKeepTheirDistance() throws {
        let input = fixture("frag-tfdt-start.mp4")
        let output = directory.file("audio-only.mp4")
        let early = try runCLI(["remux", input, output, "--from", "0.3", "--to", "0.7"])
        XCTAssertEqual(early.status, 0, early.stderr)
        XCTAssertTrue(early.stderr.contains("track 1 presents nothing"), early.stderr)
        try checkCut("frag-tfdt-start.mp4", from: "1.5", to: "5.5")
    }

    /// The audio cut of extraction (`extract-audio IN OUT.m4a --from --to`) counts on the same
    /// clock: it used to refuse 0.3–0.7 s of hls-late.mp4 as outside a file lasting 30.874 s.
    /// Its packets are presented at the remux cut's audio times.
    func testAudioExtractionCutsOnTheFilesClock() throws {
        let input = fixture("timeline/hls-late.mp4")
        let output = directory.file("cut.m4a")
        let run = try runCLI([input, output, "--from", "0.3", "--to", "0.7"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let source = try packets(input)
        let cut = try packets(output)
        var times: [String: [Double]] = [:]
        for packet in source.packets where packet.kind == "audio" {
            times[packet.hash, default: []].append(packet.time - source.start)
        }
        let presented = cut.packets.filter { !$0.discarded }.dropFirst()  // The first: FFmpeg's skip.
        XCTAssertGreaterThan(presented.count, 10)
        for packet in presented {
            let wanted = packet.time + 0.3
            let nearest = (times[packet.hash] ?? []).min { abs($0 - wanted) < abs($1 - wanted) } ?? .infinity
            XCTAssertLessThan(abs(nearest - wanted), 0.00005, "audio packet at \(packet.time) s on the file's clock")
        }
    }

    /// A range past the file's end is measured on its clock too: refused with the length
    /// counted from its first presented frame, not from the decode clock's 0: to its last
    /// frame's end (ffprobe's packets: 1.071973 s after the file's start; the largest
    /// composition offset added to the decode end, a bound, said 1.152 s).
    func testRangePastTheEndNamesTheLengthOnTheFilesClock() throws {
        let run = try runCLI(["remux", fixture("timeline/hls-late.mp4"), directory.file("none.mp4"),
                              "--from", "3", "--to", "4"])
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("which lasts 1.072 s"), run.stderr)
    }
}
