import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// `extract-audio remux` (issue 14): which tracks are kept, the cut, metadata, errors.
/// Every fact about the output is read back by ffprobe/ffmpeg, never by our own parser.
final class RemuxCLITests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
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

    func tool(_ name: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try oraclePath(name))
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// ffprobe's streams: (codec_type, codec_tag_string).
    func streams(_ path: String) throws -> [[String: Any]] {
        let json = try tool("ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", path])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return object["streams"] as? [[String: Any]] ?? []
    }

    func format(_ path: String) throws -> [String: Any] {
        let json = try tool("ffprobe", ["-v", "error", "-show_format", "-of", "json", path])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return object["format"] as? [String: Any] ?? [:]
    }

    /// The CRC of every packet of one stream, as ffprobe computes it.
    func packetHashes(_ path: String, _ stream: String) throws -> [String] {
        try tool("ffprobe", ["-v", "error", "-ignore_editlist", "1", "-select_streams", stream, "-show_packets",
                             "-show_data_hash", "CRC32", "-show_entries", "packet=data_hash", "-of", "csv=p=0", path])
            .split(separator: "\n").map(String.init)
    }

    /// MD5 of each decoded video frame (FFmpeg).
    func frames(_ path: String) throws -> [String] {
        try tool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "") }
    }

    /// A fragmented input cut inside its last fragment (a recording stopped mid-write): the
    /// fragments before the cut parse, so the copy used to end silently before it (exit 0,
    /// no warning). A remux has no salvage: it refuses with 65 and names the fragment, as it
    /// refuses a regular file cut short, and leaves nothing behind. The oracle that the
    /// input is cut: ffprobe reads its last packet 30 bytes short.
    func testTruncatedFragmentedInputIsRefused() throws {
        func samples(_ count: Int, from start: Int) -> [SyntheticFragmentedMovie.Sample] {
            (start..<(start + count)).map { .init(size: UInt32(50 + $0 * 3), duration: 1024) }
        }
        let synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: samples(4, from: 0))]),
            .init(runs: [.init(samples: samples(4, from: 4))]),
            .init(runs: [.init(samples: samples(4, from: 8))]),
        ])
        var bytes = synthetic.build()
        bytes.removeLast(30)
        let input = directory.write("cut-fragment.mp4", bytes)
        let whole = directory.write("whole-fragment.mp4", synthetic.build())
        func sizes(_ path: String) throws -> [Int] {
            try tool("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", path])
                .split(separator: "\n").compactMap { Int($0) }
        }
        // FFmpeg reads the 12 packets of the whole file, and of the cut one the same but the
        // last, 30 bytes short: the file ends inside it.
        let wholeSizes = try sizes(whole)
        XCTAssertEqual(wholeSizes.count, 12)
        XCTAssertEqual(try sizes(input), wholeSizes.dropLast() + [wholeSizes[11] - 30])
        let output = directory.file("cut-fragment-copy.mp4")
        let run = try runCLI(["remux", input, output])
        XCTAssertEqual(run.status, 65, run.stderr)
        let lines = run.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("is truncated") && run.stderr.contains("inside the fragment at byte"),
                      run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        // The same file whole copies every packet.
        let copy = directory.file("whole-fragment-copy.mp4")
        XCTAssertEqual(try runCLI(["remux", whole, copy]).status, 0)
        XCTAssertEqual(try sizes(copy), wholeSizes)
    }

    func testDropAudioKeepsTheVideoPackets() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let output = directory.file("silent.mp4")
        let run = try runCLI(["remux", input, output, "--drop-audio"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try streams(output).map { $0["codec_type"] as? String }, ["video"])
        XCTAssertEqual(try packetHashes(output, "v"), try packetHashes(input, "v"))
    }

    func testDropVideoKeepsTheAudioPackets() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let output = directory.file("audio.mp4")
        let run = try runCLI(["remux", input, output, "--drop-video"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try streams(output).map { $0["codec_type"] as? String }, ["audio"])
        XCTAssertEqual(try packetHashes(output, "a"), try packetHashes(input, "a"))
    }

    func testTrackIDKeepsTheNamedTracks() throws {
        let input = fixture("meta-itunes-video.mp4")
        let inputStreams = try streams(input)
        let output = directory.file("two.mp4")
        let run = try runCLI(["remux", input, output, "--track-id", "2", "--track-id", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        // Cover art (covr in the tags) shows as attached-picture streams: not tracks.
        func tracks(_ list: [[String: Any]]) -> [[String: Any]] {
            list.filter { (($0["disposition"] as? [String: Any])?["attached_pic"] as? Int) != 1 }
        }
        let written = tracks(try streams(output))
        XCTAssertEqual(written.map { $0["codec_name"] as? String },
                       tracks(inputStreams).filter { ["0x1", "0x2"].contains($0["id"] as? String) }
                           .map { $0["codec_name"] as? String })
        XCTAssertEqual(written.count, 2)
        let one = directory.file("one.mp4")
        XCTAssertEqual(try runCLI(["remux", input, one, "--track-id", "2"]).status, 0)
        XCTAssertEqual(tracks(try streams(one)).map { $0["codec_type"] as? String }, ["audio"])
        let missing = try runCLI(["remux", input, directory.file("none.mp4"), "--track-id", "9"])
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderr.contains("no track with ID 9"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("none.mp4")))
    }

    /// `--duration D` is `--to FROM+D`; the cut lasts D for ffprobe and starts at the
    /// source's frame at FROM.
    func testDurationIsToMinusFrom() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let a = directory.file("a.mp4")
        let b = directory.file("b.mp4")
        XCTAssertEqual(try runCLI(["remux", input, a, "--from", "0.52", "--duration", "1.6"]).status, 0)
        XCTAssertEqual(try runCLI(["remux", input, b, "--from", "0:00.52", "--to", "2.12"]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: a), FileManager.default.contents(atPath: b))
        XCTAssertEqual(Double(try format(a)["duration"] as? String ?? ""), 1.6)
        let source = try frames(input)
        let cut = try frames(a)
        XCTAssertEqual(cut.count, 40)  // 1.6 s at 25 fps.
        XCTAssertEqual(Array(source[13..<53]), cut)  // 0.52 s is frame 13.
    }

    /// Containers lie about key frames: with the `stss` of an H.263 clip (key frames 0 and 5,
    /// ffprobe's keys file) renamed `free`, every sample claims to be a sync sample. A cut at
    /// frame 7 must still start decoding at frame 5, the key frame by the bitstream, and say
    /// the marks were wrong: FFmpeg then decodes exactly the source's frames 7–8. Without the
    /// check the copy started at the P-picture 7 ("first frame is no keyframe").
    func testCutStartsAtARealKeyFrameWhereTheContainerLies() throws {
        var bytes = readFile(fixture("keyframes/h263.3gp"))
        let stss = Array("stss".utf8)
        let at = try XCTUnwrap((0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == stss })
        bytes.replaceSubrange(at..<(at + 4), with: Array("free".utf8))
        let input = directory.write("lying.3gp", bytes)
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "0.28", "--to", "0.36"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("sync marks are wrong"), run.stderr)
        XCTAssertEqual(try packetHashes(output, "v:0").count, 4, "frames 5 to 8 copied")
        XCTAssertEqual(try frames(output), Array(try frames(fixture("keyframes/h263.3gp"))[7..<9]))
    }

    /// A video sample of 0 bytes (the sixth of aac-h264-faststart.mp4's, set so in its `stsz`):
    /// FFmpeg 5.1 refuses a fragmented file whose `trun` lists one ("Invalid data found when
    /// processing input"), though it reads the regular file. `remux --fragment` leaves it out
    /// of the runs, its time given to the sample before, and says so: ffprobe opens the
    /// output and FFmpeg decodes the same frames as from the input (it drops the empty
    /// packet there too); GStreamer decodes it.
    func testFragmentedRemuxLeavesEmptySamplesOutOfTheRuns() throws {
        var bytes = readFile(fixture("aac-h264-faststart.mp4"))
        let type = Array("stsz".utf8)
        let at = try XCTUnwrap((0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == type })
        let entry = at + 4 + 12 + 4 * 5  // Version and flags, sample_size, sample_count, then sizes.
        bytes.replaceSubrange(entry..<(entry + 4), with: [0, 0, 0, 0])
        let input = directory.write("empty-sample.mp4", bytes)
        let output = directory.file("fragmented.mp4")
        let run = try runCLI(["remux", input, output, "--fragment", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("1 empty sample(s)"), run.stderr)
        XCTAssertEqual(try packetHashes(output, "v:0").count, 74)
        XCTAssertEqual(try frames(output), try frames(input))
        XCTAssertEqual(try frames(output).count, 74)
        XCTAssertEqual(try runTool("gst-launch-1.0", ["-q", "filesrc", "location=" + output, "!", "qtdemux", "!",
                                                       "decodebin", "!", "fakesink"]).status, 0)
    }

    /// An edit of duration 0 in a fragmented file runs to the end of the media (ISO/IEC
    /// 14496-12 § 8.6.6; DASH and HLS init segments carry it): a cut inside the time the
    /// fragments cover keeps both tracks, each lasting the range for ffprobe, with the
    /// source's frames (FFmpeg). It used to be refused as outside the file.
    func testEditOfDurationZeroInAFragmentedFileRunsToTheEnd() throws {
        let input = fixture("frag-edit-duration-0.mp4")
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "1", "--to", "2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("left out"), run.stderr)
        let kept = try streams(output)
        XCTAssertEqual(kept.compactMap { $0["codec_type"] as? String }, ["video", "audio"])
        for stream in kept {
            XCTAssertEqual(Double(stream["duration"] as? String ?? "") ?? 0, 1.0, accuracy: 0.001)
        }
        XCTAssertEqual(try frames(output), Array(try frames(input)[25..<50]))  // 25 fps: frames 25–49.
    }

    /// An empty edit longer than the media delays the track by all of it, as FFmpeg and
    /// GStreamer play it (video-delay-5s.mp4: 3 s of video after 5 s of nothing). The rule
    /// used to ignore such an edit and present the video from 0, so [5.52, 6.52) was refused
    /// as outside the file; it is frames 13–37 of the media (0.52–1.52 s), as FFmpeg shows.
    func testEmptyEditLongerThanTheMediaDelaysTheTrack() throws {
        let input = fixture("video-delay-5s.mp4")
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "5.52", "--to", "6.52"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let source = try frames(input)
        XCTAssertEqual(source.count, 75)
        XCTAssertEqual(try frames(output), Array(source[13..<38]))
    }

    /// A cut of tracks whose timescales have a common multiple past 2^31 − 1 (video at 12800,
    /// AAC at 44100, subtitles at 10^6, text at 1000: 3,528,000,000) writes the largest one,
    /// which FFmpeg reads (past 2^31 − 1 it reads a negative one: "Invalid mvhd time scale",
    /// a duration of 4.45e9 s), and says how far the edits were rounded.
    func testMovieTimescaleStaysWhereFFmpegReadsIt() throws {
        let input = fixture("mp4-subtitle-chapters.mp4")
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "0.738", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(Double(try format(output)["duration"] as? String ?? "") ?? 0, 1.262, accuracy: 0.001)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let rounding = try XCTUnwrap(object["edit_rounding"] as? Double)
        XCTAssertGreaterThan(rounding, 0)
        XCTAssertLessThan(rounding, 1.0 / 44100)
        XCTAssertTrue((object["notes"] as? [String] ?? []).contains { $0.contains("rounded by up to") })
    }

    /// An audio cut's pre-roll: the packets after the first copied one, up to the one that
    /// presents --from, are not sync samples, so that a player starting at the sync sample at
    /// or before the edit's start (GStreamer's qtdemux) decodes the pre-roll instead of
    /// starting cold at --from; every other packet stays a sync sample (seeking elsewhere is
    /// unchanged). FFmpeg flags every AAC packet key whatever `stss` says (the codec is
    /// intra-only to it), so this reads the table back; what players make of it is checked
    /// by Scripts/cut-conformance.py (GStreamer's decoder alone exact from the first sample;
    /// without this, Opus started cold). AAC-LC: one packet of pre-roll, so the second
    /// packet, presenting 1.03 s, is the only one not a sync sample; extraction's cut too.
    func testAudioPreRollFollowersAreNotSyncSamples() throws {
        let input = fixture("aac-h264-faststart.mp4")
        for (command, output) in [(["remux"], directory.file("cut.mp4")), ([], directory.file("cut.m4a"))] {
            let run = try runCLI(command + [input, output, "--from", "1.03", "--to", "2"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let movie = try Movie(reading: MemoryByteSource(readFile(output)))
            let audio = try XCTUnwrap(movie.tracks.first(where: \.isAudio))
            let boxes = try audio.sampleTable()
            let count = Int(boxes.sampleSizes.sampleCount)
            XCTAssertGreaterThan(count, 40, output)
            XCTAssertEqual(boxes.syncSamples?.sampleNumbers, [1] + Array(3...UInt32(count)), output)
            let plain = directory.file("plain" + (command.isEmpty ? ".m4a" : ".mp4"))
            XCTAssertEqual(try runCLI(command + [input, plain, "--overwrite"]).status, 0)
            let whole = try Movie(reading: MemoryByteSource(readFile(plain)))
            XCTAssertNil(try whole.tracks.first(where: \.isAudio)?.sampleTable().syncSamples,
                         "a file not cut keeps its audio all sync samples: no stss")
        }
    }

    /// Text tracks are copied checked, as sound and visual ones are (and as extraction
    /// checks its chapter track): this fixture's second text entry holds a box whose size
    /// runs past the entry, which remux copied as it was. Now it is dropped with a warning
    /// naming it, and the copied entries hold nothing the sanitizer would drop.
    func testTextSampleEntriesAreCheckedWhenCopied() throws {
        let output = directory.file("out.mp4")
        let run = try runCLI(["remux", fixture("mp4-subtitle-chapters.mp4"), output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("dropped moov/trak[4]/mdia/minf/stbl/stsd/"), run.stderr)
        let movie = try Movie(reading: MemoryByteSource(readFile(output)))
        let text = movie.tracks.filter { $0.handlerType == "text" || $0.handlerType == "sbtl" }
        XCTAssertFalse(text.isEmpty)
        for track in text {
            for entry in track.sampleDescriptions.entries {
                let fields = try XCTUnwrap(entry.textFieldsSize, "\(entry.format)")
                let check = CopiedBoxSanitizer.sanitizeEntry(entry.bytes, fieldsSize: fields, depth: 6, path: "")
                XCTAssertEqual(check.warnings, [], "\(track.path): \(entry.format)")
            }
        }
    }

    /// A B-frame video cut between keyframes starts at the frame presented at --from.
    func testBFrameCutStartsAtTheFrameAtFrom() throws {
        let input = fixture("video-bframes.mp4")
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "0.36", "--to", "0.8"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try frames(output), Array(try frames(input)[9..<20]))
    }

    /// A plain remux of a B-frame video keeps its last frames: the stated edit list is
    /// copied, not the presentation rule's fit to the decode-time duration (which ends
    /// two frames early for FFmpeg).
    func testPlainRemuxKeepsEveryFrame() throws {
        for name in ["video-bframes.mp4", "aac-h264-faststart.mp4"] {
            let output = directory.file("whole-" + name)
            XCTAssertEqual(try runCLI(["remux", fixture(name), output]).status, 0)
            XCTAssertEqual(try frames(output), try frames(fixture(name)), name)
        }
    }

    func testMetadataIsKept() throws {
        let input = fixture("meta-itunes-video.mp4")
        let output = directory.file("tagged.mp4")
        let run = try runCLI(["remux", input, output, "--from", "0.5", "--to", "1.5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        var expected = try XCTUnwrap(try format(input)["tags"] as? [String: String])
        var got = try XCTUnwrap(try format(output)["tags"] as? [String: String])
        for brandTag in ["major_brand", "minor_version", "compatible_brands", "creation_time"] {
            expected[brandTag] = nil
            got[brandTag] = nil
        }
        XCTAssertEqual(got, expected)
        XCTAssertEqual(got["title"], "Fixture Title — ünïcödé")
    }

    func testTimecodeIsDroppedFromMP4AndKeptInMOV() throws {
        let input = fixture("mov-timecode.mov")
        let mp4 = directory.file("out.mp4")
        let run = try runCLI(["remux", input, mp4])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("tmcd") && run.stderr.contains("dropped"), run.stderr)
        XCTAssertEqual(try streams(mp4).compactMap { $0["codec_tag_string"] as? String }, ["avc1", "mp4a"])
        let mov = directory.file("out.mov")
        XCTAssertEqual(try runCLI(["remux", input, mov]).status, 0)
        XCTAssertEqual(try streams(mov).compactMap { $0["codec_tag_string"] as? String }, ["avc1", "mp4a", "tmcd"])
        XCTAssertEqual(try format(mov)["format_name"] as? String, "mov,mp4,m4a,3gp,3g2,mj2")
        // PCM in sowt: dropped from an .mp4, kept (and cut) in a .mov.
        let pcm = fixture("pcm-in-mov.mov")
        let pcmMP4 = directory.file("pcm.mp4")
        let dropped = try runCLI(["remux", pcm, pcmMP4])
        XCTAssertEqual(dropped.status, 0, dropped.stderr)
        XCTAssertTrue(dropped.stderr.contains("sowt"), dropped.stderr)
        XCTAssertEqual(try streams(pcmMP4).compactMap { $0["codec_tag_string"] as? String }, ["avc1"])
        let pcmMOV = directory.file("pcm.mov")
        XCTAssertEqual(try runCLI(["remux", pcm, pcmMOV, "--from", "0.2", "--to", "0.7"]).status, 0)
        let kept = try streams(pcmMOV)
        XCTAssertEqual(kept.compactMap { $0["codec_tag_string"] as? String }, ["avc1", "sowt"])
        XCTAssertEqual(kept.compactMap { Double($0["duration"] as? String ?? "") }, [0.5, 0.5])
    }

    func testEmptyReversedAndOutsideRangesFailWithNothingLeft() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let output = directory.file("out.mp4")
        for (arguments, status) in [(["--from", "2", "--to", "1"], Int32(64)), (["--from", "1", "--to", "1"], 64),
                                    (["--from", "1", "--duration", "0"], 64), (["--from", "9", "--to", "12"], 64),
                                    (["--from", "1:61"], 64), (["--to", "1", "--duration", "1"], 64)] {
            let run = try runCLI(["remux", input, output] + arguments)
            XCTAssertEqual(run.status, status, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
            XCTAssertEqual(directory.contents, [], "\(arguments)")
        }
        let broken = directory.write("broken.mp4", Array("this is not a movie at all".utf8))
        let run = try runCLI(["remux", broken, output, "--from", "1"])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertEqual(directory.contents, ["broken.mp4"])
    }

    /// A cut whose `--from` comes before the video's first sync sample copies from the first
    /// frame and says so (issue 14), in words, not as a flag.
    func testFromBeforeTheFirstSyncSampleIsNoted() throws {
        var video = SyntheticMovie(sampleCount: 10)
        video.handler = .vide
        video.editList = nil
        video.extraSampleTableBoxes = [SyncSampleBox(sampleNumbers: [5]).serialized]
        let input = directory.write("late-sync.mp4", video.build())
        let run = try runCLI(["remux", input, directory.file("cut.mp4"), "--from", "0.03", "--to", "0.2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("track 1: the cut starts at 0.030 s, before its first sync sample"),
                      run.stderr)
        let later = try runCLI(["remux", input, directory.file("cut2.mp4"), "--from", "0.15", "--to", "0.2"])
        XCTAssertEqual(later.status, 0, later.stderr)
        XCTAssertFalse(later.stderr.contains("first sync sample"), later.stderr)
    }

    /// `--fragment`: fragments start at sync samples and carry the same packets.
    func testFragmentedCutHasTheSamePackets() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let plain = directory.file("plain.mp4")
        let fragmented = directory.file("frag.mp4")
        XCTAssertEqual(try runCLI(["remux", input, plain, "--from", "0.3", "--to", "2.7"]).status, 0)
        XCTAssertEqual(try runCLI(["remux", input, fragmented, "--from", "0.3", "--to", "2.7",
                                   "--fragment", "1"]).status, 0)
        XCTAssertTrue(try tool("ffprobe", ["-v", "error", "-show_format", fragmented]).count > 0)
        for stream in ["v", "a"] {
            XCTAssertEqual(try packetHashes(fragmented, stream), try packetHashes(plain, stream))
        }
        // FFmpeg 5.1 applies a fragmented file's edit list to timestamps but does not drop
        // the frames before its start: the plain cut's frames end the fragmented one's.
        let fragmentFrames = try frames(fragmented)
        let plainFrames = try frames(plain)
        XCTAssertEqual(Array(fragmentFrames.suffix(plainFrames.count)), plainFrames)
        XCTAssertEqual(plainFrames.count, 60)  // 2.4 s at 25 fps.
    }
}
