import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The cut rule against ffprobe's packets of B-frame videos (Fixtures/expected/packets,
/// from `ffprobe -ignore_editlist 1 -show_packets`): for every frame boundary the copy
/// starts at the last key packet at or before the packet presented there, and ends with the
/// last packet in decode order presented before the end; the edit's media time is that
/// frame's pts counted from the first copied packet's dts.
final class CutPlanTests: XCTestCase {
    struct Expectation: Decodable {
        struct Track: Decodable {
            var track_id: UInt32
            var packets: [[Int64]]?
        }
        var file: String
        var tracks: [Track]
    }

    func testVideoCutsFollowFFprobePackets() throws {
        for name in ["video-bframes.mp4", "aac-h264-faststart.mp4", "video-bframes-negative-cts.mp4",
                     "video-ctts-v0-negative.mp4"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture("expected/packets/\(name).json")))
            let expected = try JSONDecoder().decode(Expectation.self, from: data)
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            let video = try XCTUnwrap(reader.tracks.first { $0.kind == .video })
            let packets = try XCTUnwrap(expected.tracks.first { $0.track_id == video.id }?.packets)
            let samples = try reader.samples(of: video)
            let presentation = reader.presentation(of: video, samples: samples)
            let priming = presentation.priming  // The edit's media time: where 0 s is.
            let frame = Int64(packets[0][2])
            let timescale = video.timescale
            let count = packets.count
            for startFrame in stride(from: 1, to: count - 2, by: 2) {
                let endFrame = min(count - 1, startFrame + 7)
                let from = CutTime(nanoseconds: UInt64(startFrame) * UInt64(frame) * 1_000_000_000 / UInt64(timescale))
                let to = CutTime(nanoseconds: UInt64(endFrame) * UInt64(frame) * 1_000_000_000 / UInt64(timescale))
                let plan = try XCTUnwrap(try CutPlan(
                    samples: samples, presentation: presentation, timescale: timescale,
                    movieTimescale: reader.movie.header.timescale, outputMovieTimescale: timescale,
                    range: CutRange(from: from, to: to), preRoll: PreRoll(track: video)))
                // From ffprobe: the packet presented at `from`, the key packet before it, the
                // last packet in decode order presented before `to`.
                let ptsFrom = Int64(priming) + Int64(startFrame) * frame
                let ptsTo = Int64(priming) + Int64(endFrame) * frame
                let target = try XCTUnwrap(packets.firstIndex { $0[1] <= ptsFrom && ptsFrom < $0[1] + $0[2] })
                let first = try XCTUnwrap(packets[...target].lastIndex { $0[5] == 1 })
                let last = try XCTUnwrap(packets.lastIndex { $0[1] < ptsTo })
                XCTAssertEqual(plan.samples, first..<(last + 1), "\(name) [\(from), \(to))")
                XCTAssertEqual(plan.edits.count, 1)
                // ffprobe moves every dts earlier by FFmpeg's dts_shift where offsets are negative
                // (the first dts is then -shift); the file's decode times start at 0.
                let shift = max(0, -packets[0][0])
                XCTAssertEqual(plan.edits.first?.mediaTime, ptsFrom - (packets[first][0] + shift),
                               "\(name) [\(from), \(to))")
                XCTAssertEqual(plan.edits.first?.segmentDuration, UInt64((endFrame - startFrame)) * UInt64(frame))
            }
        }
    }

    /// Audio pre-roll: AAC's `roll` group (-1) copies one packet before the one at `from`.
    func testAACCopiesOnePacketOfPreRoll() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("aac-h264-faststart.mp4"))))
        let audio = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        let samples = try reader.samples(of: audio)
        let presentation = reader.presentation(of: audio, samples: samples)
        let groups = try audio.track.sampleTable().sampleGroupDescriptions
        XCTAssertEqual(PreRoll(track: audio, sampleGroups: groups), .packets(1))
        XCTAssertEqual(PreRoll(track: audio), .packets(1))  // AAC-LC without the group.
        let plan = try XCTUnwrap(try CutPlan(
            samples: samples, presentation: presentation, timescale: audio.timescale,
            movieTimescale: reader.movie.header.timescale, outputMovieTimescale: audio.timescale,
            range: CutRange(from: CutTime(nanoseconds: 1_000_000_000)), preRoll: .packets(1)))
        // 1 s at 44.1 kHz after the priming: packet (priming + 44100) / 1024, one before it.
        let atFrom = Int((presentation.priming + 44100) / 1024)
        XCTAssertEqual(plan.samples.lowerBound, atFrom - 1)
        XCTAssertEqual(plan.samples.upperBound, samples.count)
        XCTAssertEqual(plan.edits.first?.mediaTime, Int64(presentation.priming + 44100) - Int64(atFrom - 1) * 1024)
    }
}
