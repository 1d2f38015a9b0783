import Foundation
import TestSupport
import XCTest

/// Issue 20, item 5: audio sample entries that extraction, `remux` and `mux` write must be
/// ones a player can use. Every verdict on an output is FFmpeg's (a decode with `-v error`,
/// ffprobe's frame count), never our parser's.
final class CopiedEntryCodecTests: XCTestCase {
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

    /// What FFmpeg says when it decodes audio stream `stream` of `path` (empty when all is well).
    func decodeErrors(_ path: String, stream: String = "0:a:0") throws -> String {
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", stream, "-f", "null", "-"]).stderr
    }

    /// ffprobe's decoded frame count and channel count of the first audio stream.
    func decoded(_ path: String) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "a:0", "-show_entries",
                                "stream=nb_read_frames,channels,sample_rate", "-of", "csv=p=0", path])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: esds read by its structure

    /// A stray descriptor where the DecoderConfigDescriptor must stand, then a 3-channel
    /// configuration for the stereo stream: FFmpeg decodes the input by the entry's fields;
    /// the output used to carry 3 channels and failed on every frame.
    func testStrayDescriptorBeforeTheDecoderConfigIsNotSearchedPast() throws {
        let input = fixture("mov-esds-junk.mov")
        XCTAssertEqual(try decodeErrors(input), "", "FFmpeg decodes the input")
        let output = directory.file("junk.m4a")
        let run = try runCLI([input, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("AAC-LC"), run.stderr)
        XCTAssertEqual(try decodeErrors(output), "")
        XCTAssertEqual(try decoded(output), try decoded(input))
        XCTAssertEqual(try decoded(output), "44100,2,87")
    }

    // MARK: remux and mux check every copied audio entry

    /// ffprobe's stream types of `path`.
    func streamTypes(_ path: String) throws -> [String] {
        try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path])
            .stdout.split(separator: "\n").map(String.init)
    }

    func packetHashes(_ path: String, _ stream: String) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_packets", "-show_data_hash", "CRC32",
                                "-show_entries", "packet=data_hash", "-of", "csv=p=0", path]).stdout
    }

    func testRemuxDropsAnAudioTrackExtractionRefusesAndKeepsTheRest() throws {
        let input = fixture("codec-mp4a-oti-0.mp4")
        let output = directory.file("video.mp4")
        let run = try runCLI(["remux", input, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("track 2 (mp4a) was dropped"), run.stderr)
        XCTAssertEqual(try streamTypes(output), ["video"])
        XCTAssertEqual(try packetHashes(output, "v"), try packetHashes(input, "v"))
    }

    func testRemuxOfANamedUnusableTrackExits69() throws {
        let output = directory.file("audio.mp4")
        let run = try runCLI(["remux", fixture("codec-mp4a-oti-0.mp4"), output, "--track-id", "2"])
        XCTAssertEqual(run.status, 69, run.stderr)
        XCTAssertTrue(run.stderr.contains("object type 0x00"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testRemuxWithNothingUsableLeftExits69() throws {
        let output = directory.file("opus.mp4")
        let run = try runCLI(["remux", fixture("codec-opus-no-dops.mp4"), output])
        XCTAssertEqual(run.status, 69, run.stderr)
        XCTAssertTrue(run.stderr.contains("no dOps box"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testMuxLeavesOutTheVideosUnusableAudio() throws {
        let output = directory.file("mux.mp4")
        let run = try runCLI(["mux", fixture("codec-mp4a-oti-0.mp4"), "--audio", fixture("aac-48k-mono.mp4"), output,
                              "--keep-original-audio"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("object type 0x00") || run.stdout.contains("object type 0x00"),
                      run.stdout + run.stderr)
        XCTAssertEqual(try streamTypes(output), ["video", "audio"], "the music alone")
        XCTAssertEqual(try decodeErrors(output), "")
    }

    // MARK: an entry valid in the output's brand

    /// The version field of the first `mp4a` sample entry of `path` (the 2 bytes after the
    /// 6 reserved bytes and the data reference index, ISO/IEC 14496-12 § 12.2.3), and
    /// whether its `esds` is a direct child (the 4 bytes after the 28 bytes of fields).
    func firstMP4AEntry(_ path: String) throws -> (version: Int, esdsFirst: Bool) {
        let bytes = readFile(path)
        let name = Array("mp4a".utf8)
        // The entry: a box named mp4a whose size field precedes it, inside stsd.
        let stsd = try XCTUnwrap((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(Array("stsd".utf8)) })
        let at = try XCTUnwrap((stsd..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(name) })
        let version = Int(bytes[at + 12]) << 8 | Int(bytes[at + 13])
        let child = at + 4 + 28 + 4
        return (version, bytes[child..<(child + 4)].elementsEqual(Array("esds".utf8)))
    }

    /// An iPhone movie's QuickTime version 1 sound description: into an .mp4 it becomes an
    /// ISO entry (version 0, esds out of wave) that extraction reads back, as FFmpeg does;
    /// into a .mov it stays as it was.
    func testRemuxOfAQuickTimeSoundEntryIntoMP4WritesAnISOEntry() throws {
        let input = fixture("meta-iphone.mov")
        XCTAssertEqual(try firstMP4AEntry(input).version, 1)
        let output = directory.file("phone.mp4")
        let run = try runCLI(["remux", input, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try decodeErrors(output), "")
        XCTAssertEqual(try decoded(output), try decoded(input))
        let entry = try firstMP4AEntry(output)
        XCTAssertEqual(entry.version, 0)
        XCTAssertTrue(entry.esdsFirst)
        let audio = directory.file("phone.m4a")
        let extraction = try runCLI([output, audio])
        XCTAssertEqual(extraction.status, 0, extraction.stderr)
        XCTAssertEqual(try decoded(audio), try decoded(input))

        let movie = directory.file("phone.mov")
        XCTAssertEqual(try runCLI(["remux", input, movie]).status, 0)
        XCTAssertEqual(try firstMP4AEntry(movie).version, 1, "a QuickTime movie keeps the QuickTime entry")
        XCTAssertEqual(try decoded(movie), try decoded(input))
    }
}
