import Foundation
import TestSupport
import XCTest

/// One damaged track never sinks the rest (issue 32): a track whose `stsd` is gone, or whose
/// `stsz` count contradicts its other tables, is dropped from a remux or a cut with one
/// warning naming it, listed in `--json`'s `dropped_tracks`, and the other tracks are written
/// as if it were not there. The inputs are built here from fixtures (each trak's `stsd`
/// renamed `free`, sizes unchanged); the outputs are judged by ffprobe (streams), FFmpeg
/// (framemd5 of every video frame) and GStreamer (checksumsink of every decoded frame).
final class DamagedTrackCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg", "ffprobe", "gst-launch-1.0"])
    }

    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    /// `name`'s bytes with the `stsd` of its `nth` trak (1-based, file order; one `stsd` per
    /// trak in these fixtures) renamed `free`: that track has no sample descriptions.
    func withoutDescriptions(_ name: String, trak nth: Int) throws -> String {
        var bytes = readFile(fixture(name))
        let type = Array("stsd".utf8)
        let hits = (0...(bytes.count - 4)).filter { Array(bytes[$0..<($0 + 4)]) == type }
        let at = try XCTUnwrap(hits.count >= nth ? hits[nth - 1] : nil, "\(name) has \(hits.count) stsd")
        bytes.replaceSubrange(at..<(at + 4), with: Array("free".utf8))
        return directory.write("\(nth)-no-stsd-\(name)", bytes)
    }

    func output(_ tool: String, _ arguments: [String]) throws -> String {
        let run = try runTool(tool, arguments)
        XCTAssertEqual(run.status, 0, "\(tool) \(arguments)")
        return run.stdout
    }

    func codecTypes(_ path: String) throws -> [String] {
        try output("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path])
            .split(separator: "\n").map(String.init)
    }

    /// MD5 of each decoded video frame (FFmpeg).
    func ffmpegFrames(_ path: String) throws -> [String] {
        try output("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "") }
    }

    /// The checksum of each decoded video frame (GStreamer), without its timestamp.
    func gstreamerFrames(_ path: String) throws -> [String] {
        try output("gst-launch-1.0", ["-q", "filesrc", "location=" + path, "!", "qtdemux", "name=d", "d.video_0", "!",
                                      "queue", "!", "decodebin", "!", "videoconvert", "!", "checksumsink"])
            .split(separator: "\n").map { String($0.split(separator: " ").last ?? "") }
    }

    func testRemuxAndCutsDropTheDamagedTrack() throws {
        let source = fixture("aac-h264-faststart.mp4")
        let sourceFrames = try ffmpegFrames(source)
        let sourceGStreamer = try gstreamerFrames(source)
        XCTAssertEqual(sourceFrames.count, 75)
        XCTAssertEqual(sourceGStreamer.count, 75)
        // (input, the damaged track, what ffprobe lists of the output); every input's video
        // is the source's.
        let cases: [(input: String, damaged: Int, kept: [String])] = [
            (try withoutDescriptions("aac-h264-faststart.mp4", trak: 2), 2, ["video"]),
            (fixture("corrupt/stsz-count-mismatch.mp4"), 2, ["video"]),
            (try withoutDescriptions("aac-two-audio.mp4", trak: 2), 2, ["video", "audio"]),
        ]
        for (input, damaged, kept) in cases {
            XCTAssertEqual(try runTool("ffprobe", ["-v", "error", input]).status, 0, "ffprobe reads \(input)")
            let inputFrames = try ffmpegFrames(input)
            for (label, range, first, count) in [("whole", [String](), 0, inputFrames.count),
                                                 ("cut", ["--from", "0.52", "--to", "2.12"], 13, 40)] {
                let written = directory.file("\(label)-\(damaged)-\((input as NSString).lastPathComponent)")
                let run = try runCLI(["remux", "--json", input, written] + range)
                XCTAssertEqual(run.status, 0, "\(input) \(label): \(run.stderr)")
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
                let warnings = (object["warnings"] as? [String] ?? []).filter { $0.hasPrefix("track \(damaged) ") }
                XCTAssertEqual(warnings.count, 1, run.stdout)
                XCTAssertTrue(warnings.first?.contains("was dropped: its boxes are damaged") == true, run.stdout)
                XCTAssertTrue(warnings.first?.contains("moov/trak[\(damaged)]") == true, "names the box: \(run.stdout)")
                let dropped = try XCTUnwrap(object["dropped_tracks"] as? [[String: Any]])
                XCTAssertEqual(dropped.map { $0["track_id"] as? Int }, [damaged])
                XCTAssertEqual(try codecTypes(written), kept, "\(input) \(label)")
                let frames = try ffmpegFrames(written)
                XCTAssertEqual(frames.count, count, "\(input) \(label)")
                guard frames.count == count, inputFrames.count >= first + count else { continue }
                XCTAssertEqual(frames, Array(inputFrames[first..<(first + count)]), "\(input) \(label): FFmpeg")
                XCTAssertEqual(frames, Array(sourceFrames[first..<(first + count)]), "the source's frames")
                // GStreamer 1.22's qtdemux refuses the damaged input itself (no stsd): the
                // output's frames are compared with the intact source's.
                let gstreamer = try gstreamerFrames(written)
                XCTAssertEqual(gstreamer, Array(sourceGStreamer[first..<(first + count)]), "\(input) \(label): GStreamer")
            }
            // Named, the damaged track is what was asked for: its damage is the error.
            let named = try runCLI(["remux", input, directory.file("named.mp4"), "--track-id", String(damaged)])
            XCTAssertEqual(named.status, 65, named.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("named.mp4")))
        }
        // Nothing intact left of what was asked: the damage, exit 65, nothing written.
        let audio = try withoutDescriptions("aac-h264-faststart.mp4", trak: 2)
        let none = try runCLI(["remux", audio, directory.file("none.mp4"), "--drop-video"])
        XCTAssertEqual(none.status, 65, none.stderr)
        XCTAssertTrue(none.stderr.contains("moov/trak[2]"), none.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("none.mp4")))
    }

    /// `probe --packets` lists the samples of a track whose tables are intact though its
    /// `stsd` is gone, as ffprobe lists them (codec unknown): offsets, sizes and durations
    /// equal ffprobe's, after one warning naming the damage.
    func testPacketsOfATrackWithoutDescriptions() throws {
        for (name, nth) in [("aac-h264-faststart.mp4", 2), ("aac-two-audio.mp4", 3), ("aac-two-audio.mp4", 1)] {
            let input = try withoutDescriptions(name, trak: nth)
            let run = try runCLI(["probe", "--packets", "--track-id", String(nth), input])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.contains("its samples are listed, its codec unknown"), run.stderr)
            let ours = run.stdout.split(separator: "\n").map { line -> String in
                let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { pair in
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    return kv.count == 2 ? (String(kv[0]), String(kv[1])) : nil
                })
                return [fields["offset"], fields["size"], fields["duration"]].map { $0 ?? "-" }.joined(separator: ",")
            }
            let theirs = try output("ffprobe", ["-v", "error", "-ignore_editlist", "1", "-select_streams",
                                                String(nth - 1), "-show_entries", "packet=pos,size,duration",
                                                "-of", "csv=p=0", input])
                .split(separator: "\n").map { line -> String in
                    let f = line.split(separator: ",").map(String.init)  // duration,size,pos
                    return f.count == 3 ? "\(f[2]),\(f[1]),\(f[0])" : String(line)
                }
            XCTAssertGreaterThan(theirs.count, 0, "\(name) trak \(nth)")
            XCTAssertEqual(ours, theirs, "\(name) trak \(nth)")
        }
    }

    /// `package` leaves a damaged track out and packages the rest (issue 32): the video
    /// that FFmpeg's HLS demuxer reads back decodes to the intact source's frames; a file
    /// whose only audio and video are damaged is refused. `probe` shows the damaged track as
    /// such (not "extractable").
    func testPackageDropsTheDamagedTrackAndProbeShowsIt() throws {
        let source = fixture("aac-h264-faststart.mp4")
        let sourceFrames = try ffmpegFrames(source)
        for (input, damaged) in [(try withoutDescriptions("aac-h264-faststart.mp4", trak: 2), 2),
                                 (fixture("corrupt/stsz-count-mismatch.mp4"), 2)] {
            let folder = directory.file("package-\((input as NSString).lastPathComponent)")
            let run = try runCLI(["package", "--json", input, folder])
            XCTAssertEqual(run.status, 0, "\(input): \(run.stderr)")
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let dropped = try XCTUnwrap(object["dropped_tracks"] as? [[String: Any]], run.stdout)
            XCTAssertEqual(dropped.map { $0["track_id"] as? Int }, [damaged], run.stdout)
            let warnings = run.stderr.split(separator: "\n").filter {
                $0.contains("track \(damaged) ") && $0.contains("was dropped: its boxes are damaged")
            }
            XCTAssertEqual(warnings.count, 1, run.stderr)
            let played = try ffmpegFrames(folder + "/master.m3u8")
            XCTAssertEqual(played, sourceFrames, "\(input): the packaged video, through FFmpeg's hls demuxer")

            let probe = try runCLI(["probe", "--json", input])
            XCTAssertEqual(probe.status, 0, probe.stderr)
            let tracks = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8))
                as? [String: Any])?["tracks"] as? [[String: Any]])
            let track = try XCTUnwrap(tracks.first { $0["id"] as? Int == damaged })
            XCTAssertEqual(track["extractable"] as? Bool, false, "\(input): \(track)")
            XCTAssertTrue((track["problem"] as? String)?.contains("moov/trak[\(damaged)]") == true, "\(track)")
            let extraction = try runCLI([input, directory.file("audio.m4a")])
            XCTAssertEqual(extraction.status, 65, "the chosen audio track is damaged: \(extraction.stderr)")
        }
        let video = try withoutDescriptions("video-bframes.mp4", trak: 1)
        let none = try runCLI(["package", video, directory.file("none")])
        XCTAssertEqual(none.status, 65, none.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("none")))
    }

    /// `concat` leaves an input's damaged track out (issue 32): two inputs whose audio has no
    /// `stsd` join as video, every frame FFmpeg decodes the intact source's, twice; an intact
    /// input and a damaged one differ in kinds and are refused (69), naming the damage.
    func testConcatDropsTheDamagedTrack() throws {
        let source = fixture("aac-h264-faststart.mp4")
        let sourceFrames = try ffmpegFrames(source)
        let damaged = try withoutDescriptions("aac-h264-faststart.mp4", trak: 2)
        let joined = directory.file("joined.mp4")
        let run = try runCLI(["concat", damaged, damaged, joined])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.contains("track 2 was dropped: its boxes are damaged") }
            .count, 2, run.stderr)
        XCTAssertEqual(try codecTypes(joined), ["video"])
        XCTAssertEqual(try ffmpegFrames(joined), sourceFrames + sourceFrames, "FFmpeg: the source's frames, twice")

        let mixed = try runCLI(["concat", source, damaged, directory.file("mixed.mp4")])
        XCTAssertEqual(mixed.status, 69, mixed.stderr)
        XCTAssertTrue(mixed.stderr.contains("its boxes are damaged"), mixed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("mixed.mp4")))
    }

    /// `mux` leaves a damaged track of the video out (issue 32): with `--keep-original-audio`
    /// a damaged first audio track is dropped with one warning and the next intact one kept
    /// (its packets the input's, by FFmpeg's stream hash); the video is the source's, frame
    /// for frame. When the only video track is damaged, that is the error: 65, nothing written.
    func testMuxDropsTheDamagedTrack() throws {
        let music = fixture("meta-itunes.m4a")
        let input = try withoutDescriptions("aac-two-audio.mp4", trak: 2)
        func packetHash(_ path: String, stream: Int) throws -> String {
            try output("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:\(stream)", "-c", "copy",
                                  "-f", "streamhash", "-"])
        }
        let written = directory.file("muxed.mp4")
        let run = try runCLI(["mux", "--json", "--keep-original-audio", input, "--audio", music, written])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let warnings = (object["warnings"] as? [String] ?? []).filter { $0.contains("track 2 was dropped: its boxes") }
        XCTAssertEqual(warnings.count, 1, run.stdout)
        XCTAssertTrue(warnings.first?.contains("moov/trak[2]") == true, "names the box: \(run.stdout)")
        let dropped = try XCTUnwrap(object["dropped_tracks"] as? [[String: Any]])
        XCTAssertEqual(dropped.map { $0["track_id"] as? Int }, [2])
        XCTAssertEqual(try codecTypes(written), ["video", "audio", "audio"])
        XCTAssertEqual(try packetHash(written, stream: 2), try packetHash(input, stream: 2),
                       "the kept original audio is the input's third track")
        XCTAssertEqual(try ffmpegFrames(written), try ffmpegFrames(fixture("aac-two-audio.mp4")))

        // Not kept, the damaged audio is dropped as any original audio is: no damage to report.
        let plain = try runCLI(["mux", "--json", input, "--audio", music, directory.file("plain.mp4")])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(plain.stdout.contains("\"dropped_tracks\": []"), plain.stdout)
        XCTAssertEqual(try codecTypes(directory.file("plain.mp4")), ["video", "audio"])

        let noVideo = try withoutDescriptions("aac-h264-faststart.mp4", trak: 1)
        let refused = try runCLI(["mux", noVideo, "--audio", music, directory.file("refused.mp4")])
        XCTAssertEqual(refused.status, 65, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("moov/trak[1]"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("refused.mp4")))
    }

    /// Extraction takes the first intact audio track when the first is damaged (issue 32: as
    /// if the damaged one were not there), with a warning and `dropped_tracks`: its packets
    /// are the input's third track's, by FFmpeg's stream hash. Named, the damaged track is the
    /// error (65), as is the only audio track damaged.
    func testExtractionSkipsADamagedFirstAudioTrack() throws {
        let input = try withoutDescriptions("aac-two-audio.mp4", trak: 2)
        let written = directory.file("audio.m4a")
        let run = try runCLI(["--json", input, written])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["dropped_tracks"] as? [[String: Any]])?.map { $0["track_id"] as? Int }, [2])
        XCTAssertEqual((object["warnings"] as? [String] ?? []).filter { $0.hasPrefix("track 2 was dropped: its boxes") }
            .count, 1, run.stdout)
        func packetHash(_ path: String, stream: Int) throws -> String {
            try output("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:\(stream)", "-c", "copy",
                                  "-f", "streamhash", "-"])
        }
        XCTAssertEqual(try packetHash(written, stream: 0), try packetHash(input, stream: 2))
        let named = try runCLI([input, directory.file("named.m4a"), "--track-id", "2"])
        XCTAssertEqual(named.status, 65, named.stderr)
        let only = try runCLI([try withoutDescriptions("aac-h264-faststart.mp4", trak: 2), directory.file("only.m4a")])
        XCTAssertEqual(only.status, 65, only.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("named.m4a")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("only.m4a")))
    }

    /// A sync table counting from 0 (`video-stss-zero-based.mp4`) is read as FFmpeg reads it,
    /// not refused: a cut of it decodes, in FFmpeg, to the frames of the intact
    /// `video-bframes.mp4` in the range.
    func testCutOfAZeroBasedSyncTable() throws {
        let written = directory.file("cut.mp4")
        let run = try runCLI(["remux", fixture("video-stss-zero-based.mp4"), written, "--from", "0.6", "--to", "0.96"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try ffmpegFrames(written), Array(try ffmpegFrames(fixture("video-bframes.mp4"))[15..<24]))
    }

    /// A fragmented file cut inside a fragment has lost its later samples: `package`,
    /// `concat` and `mux` (as the music) refuse it (65) and leave nothing, as `remux` does,
    /// rather than pass a partial copy for a whole one.
    func testCutFragmentedInputsAreRefused() throws {
        let cut = fixture("frag-keyframe-truncated.mp4")
        let runs: [(String, [String])] = [
            ("package", ["package", cut, directory.file("p")]),
            ("concat", ["concat", cut, cut, directory.file("c.mp4")]),
            ("mux", ["mux", fixture("aac-h264-faststart.mp4"), "--audio", cut, directory.file("m.mp4")]),
            ("remux", ["remux", cut, directory.file("r.mp4")]),
        ]
        for (name, arguments) in runs {
            let run = try runCLI(arguments)
            XCTAssertEqual(run.status, 65, "\(name): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("inside the fragment"), "\(name): \(run.stderr)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "nothing left behind")
    }
}
