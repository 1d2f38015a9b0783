import Foundation
import TestSupport
import XCTest

/// Cuts of a Smooth Streaming-like file (issue 32): every track in a 10 MHz media timescale
/// (`Fixtures/timeline/smooth.ismv`, FFmpeg's `-f ismv`). FFmpeg 5.1 skips an audio edit's
/// media time as that many samples, counting in the media timescale: a cut whose audio
/// stayed in 10 MHz (an edit from 247619 ticks, 1092 samples) decoded to nothing in FFmpeg.
/// The oracles are FFmpeg's and GStreamer's decodes of the cut against FFmpeg's of the
/// source from `--from`, sample by sample, for `remux` and for the audio cut of extraction.
final class RemuxSmoothAudioCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg", "gst-launch-1.0"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// 16-bit mono samples decoded by FFmpeg.
    func ffmpegSamples(_ path: String) throws -> [Int16] {
        let raw = directory.file("ffmpeg-\(UUID().uuidString).raw")
        _ = try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-f", "s16le", raw])
        return samples(raw)
    }

    /// 16-bit mono samples decoded by GStreamer (`qtdemux ! avdec_aac`, no dithering).
    func gstreamerSamples(_ path: String) throws -> [Int16] {
        let raw = directory.file("gst-\(UUID().uuidString).raw")
        _ = try runTool("gst-launch-1.0", ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "name=d", "d.audio_0",
                                           "!", "queue", "!", "avdec_aac", "!", "audioconvert", "dithering=none", "!",
                                           "audio/x-raw,format=S16LE", "!", "filesink", "location=\(raw)"])
        return samples(raw)
    }

    func samples(_ path: String) -> [Int16] {
        let bytes = readFile(path)
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// How many of `cut`'s samples differ by more than one step from `source`'s from `start`.
    func mismatches(_ cut: [Int16], _ source: [Int16], from start: Int) -> Int {
        zip(cut, source.dropFirst(start)).filter { abs(Int($0) - Int($1)) > 1 }.count
    }

    func testCutOfA10MHzAudioTrackDecodesInBothPlayers() throws {
        let source = fixture("timeline/smooth.ismv")
        let cut = directory.file("cut.mp4")
        let run = try runCLI(["remux", source, cut, "--from", "1", "--to", "3.5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let original = try ffmpegSamples(source)
        XCTAssertGreaterThan(original.count, 44_100 + 110_250, "FFmpeg decodes the source past 3.5 s")
        // FFmpeg: from the source's sample at 1 s, 2.5 s and up to one packet more (it does
        // not trim the last packet). It decoded 0 samples of the 10 MHz cut.
        let ffmpeg = try ffmpegSamples(cut)
        XCTAssertGreaterThanOrEqual(ffmpeg.count, 110_250)
        XCTAssertLessThanOrEqual(ffmpeg.count, 110_250 + 1024)
        XCTAssertEqual(mismatches(ffmpeg, original, from: 44_100), 0, "FFmpeg: the source's samples from 1 s")
        // GStreamer 1.22: ends early by the first edit's media time (1092 samples) and starts
        // one sample early (it rounds the edit's start down to a nanosecond): both known,
        // see docs/cli.md; every sample it gives is the source's.
        let gstreamer = try gstreamerSamples(cut)
        XCTAssertGreaterThanOrEqual(gstreamer.count, 110_250 - 1092 - 1024)
        XCTAssertEqual(mismatches(gstreamer, original, from: 44_099), 0, "GStreamer: the source's samples from 1 s")
    }

    /// The audio cut of extraction writes the same: in 10 MHz FFmpeg decoded none of it.
    func testAudioCutOfA10MHzTrackDecodesInBothPlayers() throws {
        let source = fixture("timeline/smooth.ismv")
        let cut = directory.file("cut.m4a")
        let run = try runCLI([source, cut, "--from", "1", "--to", "3.5"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let original = try ffmpegSamples(source)
        let ffmpeg = try ffmpegSamples(cut)
        XCTAssertGreaterThanOrEqual(ffmpeg.count, 110_250)
        XCTAssertLessThanOrEqual(ffmpeg.count, 110_250 + 1024)
        XCTAssertEqual(mismatches(ffmpeg, original, from: 44_100), 0, "FFmpeg: the source's samples from 1 s")
        let gstreamer = try gstreamerSamples(cut)
        XCTAssertGreaterThanOrEqual(gstreamer.count, 110_250 - 1092 - 1024)
        XCTAssertEqual(mismatches(gstreamer, original, from: 44_099), 0, "GStreamer: the source's samples from 1 s")
    }
}
