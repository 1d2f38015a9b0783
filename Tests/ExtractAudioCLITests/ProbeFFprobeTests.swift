import Foundation
import TestSupport
import XCTest

/// `probe --json` against ffprobe on the cases the corpus run found apart
/// (Scripts/corpus-conformance.py): ffprobe is the oracle, the inputs are fixtures or
/// copies of them with one field changed.
final class ProbeFFprobeTests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg", "ffprobe"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// The `tracks` of `probe --json FILE`, by track ID.
    func probedTracks(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Int: [String: Any]] {
        let outcome = try runCLI(["probe", "--json", path])
        XCTAssertEqual(outcome.status, 0, outcome.stderr, file: file, line: line)
        let json = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        var tracks: [Int: [String: Any]] = [:]
        for track in json?["tracks"] as? [[String: Any]] ?? [] {
            if let id = track["id"] as? Int { tracks[id] = track }
        }
        return tracks
    }

    /// ffprobe's streams of `path`, by stream ID (the track ID).
    func ffprobeStreams(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Int: [String: Any]] {
        guard let run = try HostileMetadataTests.run("ffprobe", ["-v", "error", "-show_streams", "-of", "json", path])
        else {
            XCTFail("ffprobe is not installed", file: file, line: line)
            return [:]
        }
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        var streams: [Int: [String: Any]] = [:]
        for stream in json?["streams"] as? [[String: Any]] ?? [] {
            if let id = (stream["id"] as? String).flatMap({ Int($0.dropFirst(2), radix: 16) }) { streams[id] = stream }
        }
        return streams
    }

    /// A copy of fixture `name` in the temporary directory, changed by `edit`.
    func patchedCopy(of name: String, as copy: String, _ edit: (inout [UInt8]) throws -> Void) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture(name))))
        try edit(&bytes)
        let path = directory.path + "/" + copy
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Where `type` first occurs after `after` (a four-character code found first).
    func position(of type: String, after: String, in bytes: [UInt8]) throws -> Int {
        let start = try XCTUnwrap(find(Array(after.utf8), in: bytes, from: 0), "no \(after)")
        return try XCTUnwrap(find(Array(type.utf8), in: bytes, from: start), "no \(type) after \(after)")
    }

    func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (start...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle }
    }

    /// A video with B-frames whose edit list skips the composition delay: the edit presents
    /// up to the last frame's presentation end, after the decode times end. ffprobe: 1.0 s;
    /// probe said 0.92 s (the decode times' end minus the edit's media time).
    func testBFrameVideoLastsUntilItsLastFrameIsPresented() throws {
        let path = fixture("video-bframes.mp4")
        let ours = try XCTUnwrap(probedTracks(path)[1]?["duration"] as? Double)
        let theirs = try XCTUnwrap((ffprobeStreams(path)[1]?["duration"] as? String).flatMap(Double.init))
        XCTAssertEqual(ours, theirs, accuracy: 0.5e-6)
    }

    /// A track whose samples all last 0 ticks (a GoPro `fdsc` track): the mdhd duration stands,
    /// as ffprobe keeps it, where probe said 0.
    func testSamplesOfZeroTicksLeaveTheMediaHeadersDuration() throws {
        let path = try patchedCopy(of: "video-only.mp4", as: "zero-ticks.mp4") { bytes in
            let stts = try position(of: "stts", after: "stbl", in: bytes)
            let count = bytes[stts + 8..<stts + 12].reduce(0) { $0 << 8 | Int($1) }
            for entry in 0..<count {
                for byte in 0..<4 { bytes[stts + 12 + 8 * entry + 4 + byte] = 0 }
            }
        }
        let ours = try XCTUnwrap(probedTracks(path)[1]?["duration"] as? Double)
        let theirs = try XCTUnwrap((ffprobeStreams(path)[1]?["duration"] as? String).flatMap(Double.init))
        XCTAssertGreaterThan(theirs, 0)
        XCTAssertEqual(ours, theirs, accuracy: 0.5e-6)
    }

    /// AMR (3GPP TS 26.244): the `samr`/`sawb` entry's channel count is a template 2; AMR is
    /// mono, 8000 Hz (NB) or 16000 Hz (WB), as ffprobe says. FFmpeg writes the 2 when it
    /// muxes AMR into 3GP; the raw AMR frames are silence of the 12.2 (NB) and 23.85 kb/s
    /// (WB) modes.
    func testAMRIsMonoWhateverTheEntrySays() throws {
        for (name, magic, header, size) in [("nb", "#!AMR\n", UInt8(0x3C), 31), ("wb", "#!AMR-WB\n", UInt8(0x44), 60)] {
            let raw = directory.path + "/\(name).amr"
            let movie = directory.path + "/\(name).3gp"
            let frames = (0..<50).flatMap { _ in [header] + [UInt8](repeating: 0, count: size) }
            try Data(Array(magic.utf8) + frames).write(to: URL(fileURLWithPath: raw))
            let mux = try XCTUnwrap(HostileMetadataTests.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", raw,
                                                                       "-c", "copy", movie]), "ffmpeg is not installed")
            XCTAssertEqual(mux.status, 0, mux.stderr)
            let ours = try XCTUnwrap(probedTracks(movie)[1])
            let theirs = try XCTUnwrap(ffprobeStreams(movie)[1])
            XCTAssertEqual(ours["channels"] as? Int, (theirs["channels"] as? Int), name)
            XCTAssertEqual(ours["sample_rate"] as? Int, (theirs["sample_rate"] as? String).flatMap { Int($0) }, name)
        }
    }

    /// An audio entry whose sample rate field is 0 (IAMF's `iamf`: the rate is in its
    /// configuration OBUs): the media timescale, as ffprobe takes it (mov_finalize_stsd_codec),
    /// where probe said 0. Made from codec-opus.mp4, its entry renamed `iamf` and its rate
    /// field zeroed.
    func testAudioEntryWithoutRateTakesTheMediaTimescale() throws {
        let path = try patchedCopy(of: "codec-opus.mp4", as: "rate-0.mp4") { bytes in
            let entry = try position(of: "Opus", after: "stsd", in: bytes) - 4
            bytes.replaceSubrange(entry + 4..<entry + 8, with: Array("iamf".utf8))
            bytes.replaceSubrange(entry + 32..<entry + 36, with: [0, 0, 0, 0])
        }
        let ours = try XCTUnwrap(probedTracks(path)[1])
        let theirs = try XCTUnwrap(ffprobeStreams(path)[1])
        XCTAssertEqual(theirs["codec_tag_string"] as? String, "iamf")
        XCTAssertEqual(ours["sample_rate"] as? Int, (theirs["sample_rate"] as? String).flatMap { Int($0) })
        XCTAssertNotEqual(ours["sample_rate"] as? Int, 0)
    }
}
