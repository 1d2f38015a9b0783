import ISOBMFF
import TestSupport
import XCTest

/// `mux --json` (issue 12): `input` is the video, `clips` lists the music files with how
/// often each plays (a looped clip is one clip looped N times), `dropped` says what of the
/// video was left out, as stderr does.
final class MuxCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func testJSONShapeOfALoopedMux() throws {
        let video = fixture("aac-h264-faststart.mp4")  // 3 s, with its own AAC audio
        var synthetic = SyntheticMovie(sampleCount: 40)
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 800, mediaTime: 1024)])
        synthetic.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [SyntheticMovie.esds(objectType: 0x40,
                                                                                            config: [0x12, 0x10])])]
        let clip = directory.write("short.m4a", synthetic.build())
        let output = directory.file("out.mp4")
        let run = try runCLI(["mux", "--json", "--loop", video, "--audio", clip, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["input"] as? String, video)
        XCTAssertEqual(object["output"] as? String, output)
        XCTAssertEqual(object["status"] as? String, "ok")
        let clips = try XCTUnwrap(object["clips"] as? [[String: Any]])
        XCTAssertEqual(clips.count, 1, "one clip, looped")
        XCTAssertEqual(clips.first?["path"] as? String, clip)
        XCTAssertEqual(clips.first?["plays"] as? Int, 4)
        XCTAssertEqual(object["seams"] as? String, "packet")
        XCTAssertLessThanOrEqual(try XCTUnwrap(object["largest_seam_error"] as? Double), 512.0 / 44100)
        let dropped = try XCTUnwrap(object["dropped"] as? [String])
        XCTAssertEqual(dropped.count, 1, "\(dropped)")
        XCTAssertTrue(dropped.first?.contains("own audio") ?? false, "\(dropped)")
        XCTAssertTrue(run.stderr.contains("dropped the video's own audio"), run.stderr)

        // Without --json, the line says "looped 4 times", not "4 clips".
        let plain = try runCLI(["mux", "--overwrite", "--loop", video, "--audio", clip, output])
        XCTAssertTrue(plain.stdout.contains("short.m4a looped 4 times"), plain.stdout)
        // --keep-original-audio: nothing dropped, nothing said.
        let kept = try runCLI(["mux", "--json", "--overwrite", "--keep-original-audio", video, "--audio", clip, output])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertFalse(kept.stderr.contains("dropped"), kept.stderr)
        // --exact-seams: the multi-edit layout.
        let exact = try runCLI(["mux", "--json", "--overwrite", "--exact-seams", "--loop", video, "--audio", clip,
                                output])
        let exactObject = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(exact.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(exactObject["seams"] as? String, "exact")
        let movie = try Movie(reading: MemoryByteSource(readFile(output)))
        XCTAssertEqual(movie.tracks.first { $0.handlerType == .soun }?.editList?.entries.count, 4)
    }
}
