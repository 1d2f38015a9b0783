import ISOBMFF
import TestSupport
import XCTest

/// The numbers the "Reading samples" article shows in its comments, from ffprobe
/// (`ffprobe -ignore_editlist 1 -show_packets Fixtures/aac-h264-faststart.mp4`: stream 1
/// has 131 packets, the first at pos 3296 of 144 bytes; the packet at pts 44032 is the
/// 44th) and the file's edit list (media time 1024, 3 s).
final class ReadingSamplesArticleTests: XCTestCase {
    func testTheArticleNumbers() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("aac-h264-faststart.mp4"))))
        XCTAssertEqual(reader.tracks.map { "\($0.id) \($0.kind) \($0.timescale) \($0.format?.description ?? "")" },
                       ["1 video 12800 avc1", "2 audio 44100 mp4a"])
        let audio = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        let samples = try reader.samples(of: audio)
        XCTAssertEqual([samples.count, Int(samples[0].offset), Int(samples[0].size)], [131, 3296, 144])
        let i = try XCTUnwrap(samples.index(presentingAt: 44100))
        XCTAssertEqual(i, 43)
        XCTAssertEqual(samples[i].presentationTime, 44032)
        XCTAssertEqual(samples.syncIndex(atOrBefore: i), 43)
        let presentation = reader.presentation(of: audio, samples: samples)
        XCTAssertEqual(presentation.priming, 1024)
        XCTAssertEqual(presentation.seconds, 3.0)
    }
}
