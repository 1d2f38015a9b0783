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
                                    singleFile: Bool = false, iFrames: Bool = false,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        var options = PackageOptions()
        options.segmentSeconds = segmentSeconds
        options.singleFile = singleFile
        options.iFramePlaylists = iFrames
        let out = directory.file("out-\(UUID().uuidString)")
        let result = try Packager.run(from: input, to: out, options: options)
        let source = singleFile || iFrames ? try SegmentSource(path: input, options: options)
            : try SegmentSource(path: input, segmentSeconds: segmentSeconds)
        let written = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(source.fileNames.sorted(), written, "the same files", file: file, line: line)
        XCTAssertEqual(source.targetDuration, result.targetDuration, file: file, line: line)
        XCTAssertEqual(source.segmentCounts.map(\.count), result.tracks.map(\.segmentCount), file: file, line: line)
        let movie = readFile(input)
        var ranges = 0
        var headerBytes: UInt64 = 0
        var segments = 0
        func bytes(of parts: [SegmentPart], _ name: String, counting: Bool = true) -> [UInt8] {
            var served: [UInt8] = []
            for part in parts {
                switch part {
                case .bytes(let bytes):
                    served += bytes
                    if counting, name.hasSuffix(".m4s") || name.hasSuffix(".mp4") && singleFile {
                        headerBytes += UInt64(bytes.count)
                    }
                case .range(let offset, let count):
                    if counting { ranges += 1 }
                    let start = Int(offset)
                    XCTAssertLessThanOrEqual(start + Int(count), movie.count, name, file: file, line: line)
                    served += movie[start..<min(movie.count, start + Int(count))]
                }
            }
            return served
        }
        for name in written {
            let parts = try XCTUnwrap(try source.contents(of: name), name, file: file, line: line)
            let served = bytes(of: parts, name)
            XCTAssertEqual(source.size(of: name), UInt64(served.count), name, file: file, line: line)
            if singleFile, name.hasSuffix(".mp4") {
                segments += result.tracks.first { "track\($0.inputID).mp4" == name }?.segmentCount ?? 0
                // Each segment's byte range, as the media playlist lists it, alone; then ranges
                // across the init segment, the sidx and segment boundaries, and past the end.
                let packaged = readFile(out + "/" + name)
                let playlist = try String(contentsOfFile: out + "/" + name.dropLast(4) + ".m3u8", encoding: .utf8)
                var wanted: [Range<UInt64>] = playlist.split(separator: "\n")
                    .filter { $0.hasPrefix("#EXT-X-BYTERANGE:") }.compactMap { line in
                        let fields = line.dropFirst(17).split(separator: "@").compactMap { UInt64($0) }
                        return fields.count == 2 ? fields[1]..<(fields[1] + fields[0]) : nil
                    }
                XCTAssertEqual(wanted.count, result.tracks.first { "track\($0.inputID).mp4" == name }?.segmentCount,
                               name, file: file, line: line)
                let size = UInt64(packaged.count)
                wanted += [0..<1, 0..<700, 100..<(size / 2), (size / 3)..<(size / 3 + 1), (size - 10)..<(size + 50),
                           (size + 5)..<(size + 9)]
                for range in wanted {
                    let piece = bytes(of: try XCTUnwrap(try source.contents(of: name, range: range)), name,
                                      counting: false)
                    let expected = Array(packaged[Int(min(range.lowerBound, size))..<Int(min(range.upperBound, size))])
                    XCTAssertTrue(piece == expected, "\(name) bytes \(range)", file: file, line: line)
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
        XCTAssertEqual(written.filter { $0.hasSuffix("_iframes.m3u8") }.isEmpty, !iFrames || result.tracks.allSatisfy {
            $0.kind != "video"
        }, file: file, line: line)
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

    /// `--single-file` and `--iframes`: every file the same bytes, and any byte range of a
    /// single file built from the segments it covers alone.
    func testSingleFileAndIFramePlaylists() throws {
        for (input, seconds) in [(fixture("aac-h264-faststart.mp4"), 1.0), (fixture("video-bframes.mp4"), 0.5),
                                 (fixture("frag-cmaf.mp4"), 1.0)] {
            try assertServedEqualsPackaged(input, segmentSeconds: seconds, minimumSegments: 1, singleFile: true)
            try assertServedEqualsPackaged(input, segmentSeconds: seconds, minimumSegments: 1, iFrames: true)
            try assertServedEqualsPackaged(input, segmentSeconds: seconds, minimumSegments: 1, singleFile: true,
                                           iFrames: true)
        }
        var movie = SyntheticMovie(sampleCount: 2000)
        movie.editList = nil
        try assertServedEqualsPackaged(directory.write("in.m4a", movie.build()), segmentSeconds: 2, singleFile: true)
    }

    /// Empty samples (left out of the writer's `trun`s, their time given to a neighbour: the
    /// first of a segment, inside one, at its end), unequal sizes and durations, and a
    /// segment of equal ones: the sizes the plan computes without building a segment are
    /// those of the segments built (the playlists' byte counts, the `sidx`, the ranges).
    func testEmptyAndUnequalSamples() throws {
        let count = 1200
        var movie = SyntheticMovie(sampleCount: count)
        movie.editList = nil
        movie.sampleSizes = (0..<count).map { (i: Int) -> UInt32 in
            if i >= 600 && i < 800 { return 50 }  // Equal sizes: tfhd's default.
            let isEmpty = i % 7 == 0 || i % 129 < 3
            return isEmpty ? 0 : UInt32(10 + i % 5)
        }
        movie.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 300, sampleDelta: 1024),
                                                       .init(sampleCount: 1, sampleDelta: 1000),
                                                       .init(sampleCount: 899, sampleDelta: 1024)])
        var position: UInt64 = 0
        movie.chunkOffsets = []
        for (i, size) in movie.sampleSizes.enumerated() {
            if i % 2 == 0 { movie.chunkOffsets.append(position) }
            position += UInt64(size)
        }
        let path = directory.write("in.m4a", movie.build())
        try assertServedEqualsPackaged(path, segmentSeconds: 2)
        try assertServedEqualsPackaged(path, segmentSeconds: 1, singleFile: true)
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
