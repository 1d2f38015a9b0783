import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The reader's samples against ffprobe's packets, stored in Fixtures/expected/packets by
/// `Scripts/packets-conformance.py --write` (from `ffprobe -ignore_editlist 1
/// -show_packets`, not from this package; see that script for the cases where FFmpeg's
/// value is replaced by the file's). Needs no ffprobe at test time.
final class PacketsConformanceTests: XCTestCase {
    struct Expectation: Decodable {
        struct Track: Decodable {
            var track_id: UInt32
            var count: Int
            var crc32: UInt32
            var packets: [[Int64]]?
        }
        var file: String
        var fields: [String]
        var tracks: [Track]
    }

    func testEveryFixtureMatchesStoredFFprobePackets() throws {
        let directory = fixture("expected/packets")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
        XCTAssertGreaterThanOrEqual(names.count, 40, "run Scripts/packets-conformance.py --write")
        var full = 0
        for name in names.sorted() {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            let expected = try JSONDecoder().decode(Expectation.self, from: data)
            XCTAssertEqual(expected.fields, ["dts", "pts", "duration", "size", "offset", "sync"])
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(expected.file))))
            // ffprobe lists the packets of a damaged track as its tables say; the reader
            // names the damage instead (issue 20). A file cut short: the whole samples a
            // player reads before the first missing one (ffprobe's less its partial packet).
            let whole = reader.tracks.map { track -> (MediaTrack, SampleIndex?, Bool) in
                let read = try? reader.wholeSamples(of: track)
                return (track, read?.samples, read?.truncation != nil)
            }
            let counts = reader.samplesReadBeforeTheCut(whole)
            for track in expected.tracks {
                let media = try XCTUnwrap(reader.track(id: track.track_id), "\(expected.file) track \(track.track_id)")
                let place = try XCTUnwrap(reader.tracks.firstIndex { $0.id == media.id })
                guard let all = whole[place].1 else {
                    XCTAssertTrue(expected.file.hasPrefix("damaged/"), "\(expected.file) track \(media.id) unreadable")
                    XCTAssertEqual(media.id, 2, "\(expected.file): only the audio track is damaged")
                    continue
                }
                let samples = all.prefix(counts[place])
                XCTAssertEqual(samples.count, track.count, "\(expected.file) track \(track.track_id)")
                // FFmpeg moves every dts of a track with negative composition offsets earlier
                // by one constant (see `probe --packets`); pts, sizes, offsets are the file's.
                let shift: Int64 = track.packets.flatMap { packets in
                    packets.first.map { Int64(clamping: samples.first?.decodeTime ?? 0) - $0[0] }
                } ?? 0
                if all.compositionOffsetRange.lowerBound >= 0 {
                    XCTAssertEqual(shift, 0, "\(expected.file): no dts shift without negative offsets")
                } else {
                    XCTAssertTrue(shift > 0 && shift <= -all.compositionOffsetRange.lowerBound,
                                  "\(expected.file): shift \(shift)")
                }
                var text = ""
                for (i, sample) in samples.enumerated() {
                    let fields: [Int64] = [Int64(clamping: sample.decodeTime) - shift, sample.presentationTime,
                                           Int64(sample.duration), Int64(sample.size), Int64(sample.offset),
                                           sample.isSync || all.isPartialSync(i) ? 1 : 0]
                    if let packets = track.packets, i < packets.count, packets[i] != fields {
                        XCTFail("\(expected.file) track \(track.track_id) sample \(i): \(fields), ffprobe \(packets[i])")
                        break
                    }
                    text += fields.map(String.init).joined(separator: " ") + "\n"
                }
                if track.packets != nil { full += 1 }
                XCTAssertEqual(crc32(Array(text.utf8)), track.crc32, "\(expected.file) track \(track.track_id)")
            }
        }
        XCTAssertGreaterThanOrEqual(full, 10, "some fixtures are stored in full")
    }
}
