import Foundation
import TestSupport
import XCTest

/// Issue 20, item 5: audio sample entries that extraction, `remux` and `mux` write must be
/// ones a player can use. Every verdict on an output is FFmpeg's (a decode with `-v error`,
/// ffprobe's frame count), never our parser's.
final class CopiedEntryCodecTests: XCTestCase {
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
}
