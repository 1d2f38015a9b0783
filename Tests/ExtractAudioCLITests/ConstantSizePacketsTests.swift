import Foundation
import TestSupport
import XCTest

/// Issue 20, point 2: when every packet of a compressed track has one size (CBR Opus, long
/// silences), the writer stated that size once in `stsz`, without a table, and GStreamer
/// 1.22 played 13.5 ms of a 1 s CBR Opus track so written (as it does of FFmpeg's own
/// `-c copy` remux, which writes the same form: FFmpeg is no oracle here). Oracle:
/// GStreamer's decode of our extraction and remux.
final class ConstantSizePacketsTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func testCBROpusPlaysWhole() throws {
        let input = directory.file("cbr.mp4")
        let made = try runTool("ffmpeg", [
            "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
            "-c:a", "libopus", "-vbr", "off", "-b:a", "64k", input,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        let sizes = try runTool("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", input])
        let packets = sizes.stdout.split(separator: "\n").compactMap { Int($0.filter(\.isNumber)) }
        XCTAssertEqual(Set(packets).count, 1, "the input's packets must all have one size: \(Set(packets))")
        XCTAssertGreaterThan(packets.count, 40)

        let extracted = directory.file("out.m4a")
        let extract = try runCLI([input, extracted])
        XCTAssertEqual(extract.status, 0, extract.stderr)
        let remuxed = directory.file("remuxed.mp4")
        let remux = try runCLI(["remux", input, remuxed])
        XCTAssertEqual(remux.status, 0, remux.stderr)
        for output in [extracted, remuxed] {
            let raw = output + ".raw"
            let gst = try runTool("gst-launch-1.0", [
                "-q", "filesrc", "location=\(output)", "!", "qtdemux", "!", "decodebin", "!", "audioconvert", "!",
                "audio/x-raw,format=S16LE,channels=1", "!", "filesink", "location=\(raw)",
            ])
            XCTAssertEqual(gst.status, 0, gst.stderr)
            // About 1 s at 48 kHz, less the 312 samples of Opus pre-skip; 648 samples
            // (13.5 ms) with the constant-size table.
            let decoded = readFile(raw).count / 2
            XCTAssertGreaterThan(decoded, 47_000, "\(output): GStreamer decoded \(decoded) samples")
            XCTAssertLessThanOrEqual(decoded, 48_000, output)
        }
    }
}
