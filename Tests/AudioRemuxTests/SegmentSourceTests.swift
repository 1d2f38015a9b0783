@testable import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// ``SegmentSource``: every file of the package served on demand (header bytes built from the
/// tables + ranges of the unmodified source) is byte for byte the file `Packager.run` wrote,
/// the playlists included; its plan keeps one entry per segment, not per sample.
final class SegmentSourceTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    /// Packages `input`, then rebuilds every file the packager wrote from the on-demand source
    /// and compares the bytes (and their CRC, for the message).
    func assertServedEqualsPackaged(_ input: String, segmentSeconds: Double, minimumSegments: Int = 2,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        var options = PackageOptions()
        options.segmentSeconds = segmentSeconds
        let out = directory.file("out-\(UUID().uuidString)")
        let result = try Packager.run(from: input, to: out, options: options)
        let source = try SegmentSource(path: input, segmentSeconds: segmentSeconds)
        let written = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(source.fileNames.sorted(), written, "the same files", file: file, line: line)
        XCTAssertEqual(source.targetDuration, result.targetDuration, file: file, line: line)
        XCTAssertEqual(source.segmentCounts.map(\.count), result.tracks.map(\.segmentCount), file: file, line: line)
        let movie = readFile(input)
        var ranges = 0
        var headerBytes: UInt64 = 0
        var segments = 0
        for name in written {
            let parts = try XCTUnwrap(try source.contents(of: name), name, file: file, line: line)
            var served: [UInt8] = []
            for part in parts {
                switch part {
                case .bytes(let bytes):
                    served += bytes
                    if name.hasSuffix(".m4s") { headerBytes += UInt64(bytes.count) }
                case .range(let offset, let count):
                    ranges += 1
                    let start = Int(offset)
                    XCTAssertLessThanOrEqual(start + Int(count), movie.count, name, file: file, line: line)
                    served += movie[start..<min(movie.count, start + Int(count))]
                }
            }
            if name.hasSuffix(".m4s") {
                segments += 1
                // A segment is its synthesized header, then ranges of the source only.
                XCTAssertEqual(parts.dropFirst().filter { if case .bytes = $0 { true } else { false } }.count, 0,
                               name, file: file, line: line)
            }
            let packaged = readFile(out + "/" + name)
            XCTAssertEqual(crc32(served), crc32(packaged), "\(name): \(served.count) vs \(packaged.count) bytes",
                           file: file, line: line)
            XCTAssertTrue(served == packaged, name, file: file, line: line)
        }
        XCTAssertGreaterThanOrEqual(segments, minimumSegments, file: file, line: line)
        XCTAssertGreaterThanOrEqual(ranges, segments, "every segment copies ranges of the source", file: file,
                                    line: line)
        XCTAssertLessThan(headerBytes, UInt64(segments) * 4096, "small headers", file: file, line: line)
        XCTAssertNil(try source.contents(of: "track1_0.m4s"), file: file, line: line)
        XCTAssertNil(try source.contents(of: "nothing.mp4"), file: file, line: line)
    }

    func testGeneratedAudioClip() throws {
        var movie = SyntheticMovie(sampleCount: 2000)
        movie.editList = nil
        try assertServedEqualsPackaged(directory.write("in.m4a", movie.build()), segmentSeconds: 2)
    }

    func testGeneratedClipWithPrimingEdit() throws {
        let movie = SyntheticMovie(sampleCount: 900)
        try assertServedEqualsPackaged(directory.write("in.m4a", movie.build()), segmentSeconds: 3)
    }

    /// An 8 s H.264 clip with B-frames (key frames every 30 frames or sooner) and AAC made by
    /// FFmpeg, in 1 s segments.
    func testGeneratedVideoWithBFramesAndAudio() throws {
        let path = directory.file("bframes.mp4")
        let run = try runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "8",
                                         "-c:v", "libx264", "-bf", "2", "-g", "30", "-keyint_min", "10",
                                         "-c:a", "aac", "-b:a", "64k", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertServedEqualsPackaged(path, segmentSeconds: 1, minimumSegments: 8)
    }

    func testVideoWithBFrames() throws {
        // 1 s, a key frame every 12 frames: the planner's tail rule leaves one segment.
        try assertServedEqualsPackaged(fixture("video-bframes.mp4"), segmentSeconds: 0.5, minimumSegments: 1)
        try assertServedEqualsPackaged(fixture("video-bframes-negative-cts.mp4"), segmentSeconds: 0.5,
                                       minimumSegments: 1)
    }

    func testAudioAndVideo() throws {
        try assertServedEqualsPackaged(fixture("aac-h264-faststart.mp4"), segmentSeconds: 1)
        try assertServedEqualsPackaged(fixture("aac-h264-moov-end.mp4"), segmentSeconds: 2)
        try assertServedEqualsPackaged(fixture("aac-two-audio.mp4"), segmentSeconds: 1)
    }

    func testFragmentedInput() throws {
        try assertServedEqualsPackaged(fixture("frag-cmaf.mp4"), segmentSeconds: 1)
    }

    /// A long movie (200,000 AAC frames, 77 minutes, of 1 byte each): the plan holds one
    /// decode time per segment, not per sample, and no sample byte is read to make it.
    func testPlanIsPerSegmentNotPerSample() throws {
        let count = 200_000
        var movie = SyntheticMovie(sampleCount: count)
        movie.editList = nil
        movie.sampleSizes = Array(repeating: 1, count: count)
        movie.chunkOffsets = stride(from: 0, to: count, by: 2).map { UInt64($0) }
        let path = directory.write("long.m4a", movie.build())
        let source = try SegmentSource(path: path, segmentSeconds: 6)
        let track = try XCTUnwrap(source.tracks.first)
        let segments = track.prepared.segments.count
        // 200,000 × 1024 / 44,100 s = 4644.9 s in segments of about 6 s.
        XCTAssertTrue((770...775).contains(segments), "\(segments) segments")
        XCTAssertEqual(track.decodeTimes.count, segments)
        XCTAssertLessThan(segments * 100, count)
        let last = try XCTUnwrap(try source.contents(of: "track1_\(segments).m4s"))
        XCTAssertEqual(last.dropFirst().reduce(0) { $0 + $1.byteCount }, UInt64(count - track.prepared.segments[segments - 1].lowerBound))
    }
}
