@testable import AudioRemux
import ISOBMFF
import XCTest

/// The music track's plan (issue 12): one edit, packet seams within a frame of the ideal
/// and at most the late allowance late, no drift over many seams.
final class SeamPlannerTests: XCTestCase {
    /// An FFmpeg-style AAC clip: 1024 priming samples, `presented` samples, the last packet's
    /// `stts` delta shortened to end with the audio.
    func aac(_ presented: UInt64) -> ClipTiming {
        let total = 1024 + presented
        let count = Int((total + 1023) / 1024)
        var durations = [UInt32](repeating: 1024, count: count)
        durations[count - 1] = UInt32(total - UInt64(count - 1) * 1024)
        return ClipTiming(durations: durations, priming: 1024, presented: presented)
    }

    /// The scenario: 7 s of video, 3 s + 5 s clips at 44.1 kHz.
    func testScenarioIsOneEditWithACleanPacketSeam() {
        let plan = SeamPlanner.plan([aac(132300), aac(220500)], filling: 308700, offset: 0, loop: false,
                                    exactSeams: false)
        XCTAssertEqual(plan.edits, [.init(segmentDuration: 308700, mediaTime: 1024)])
        // Clip 1 ends a whole packet before its sound does (so that its sound runs through the
        // crossfade into clip 2, whose priming packet is left out), and its last kept packet is
        // repeated to win that packet back: the seam lands 204 samples early, predicted clean.
        XCTAssertEqual(plan.pieces, [.init(clip: 0, packets: 0..<129), .init(clip: 0, packets: 128..<129),
                                     .init(clip: 1, packets: 1..<174)])
        XCTAssertEqual(plan.seamErrors, [-204])
        XCTAssertEqual(plan.seamDips, [0])
        XCTAssertEqual(plan.plays, [1, 1])
        XCTAssertGreaterThanOrEqual(plan.mediaTicks, 1024 + 308700, "the packets cover the edit")
        XCTAssertEqual(plan.durations[0].last, 1024, "the shortened last delta is the frame it decodes to")
    }

    func testOffsetPrecedesTheEditWithAnEmptyEdit() {
        let plan = SeamPlanner.plan([aac(441000)], filling: 264600, offset: 44100, loop: false, exactSeams: false)
        XCTAssertEqual(plan.edits, [.init(segmentDuration: 44100, mediaTime: -1),
                                    .init(segmentDuration: 264600, mediaTime: 1024)])
    }

    /// 500 s of a looped 1.5 s clip: 333 seams, each within half a frame of the ideal and
    /// predicted clean, the error never accumulating.
    func testLoopNeverDrifts() {
        let clip = aac(66150)
        let needed: UInt64 = 500 * 44100
        let plan = SeamPlanner.plan([clip], filling: needed, offset: 0, loop: true, exactSeams: false)
        XCTAssertEqual(plan.plays, [334])
        XCTAssertEqual(plan.seamErrors.count, 333)
        for error in plan.seamErrors {
            XCTAssertLessThanOrEqual(error.magnitude, 512)
        }
        XCTAssertEqual(plan.seamDips.max(), 0)
        XCTAssertEqual(plan.edits, [.init(segmentDuration: needed, mediaTime: 1024)])
        var position: Int64 = 0
        for piece in plan.pieces {
            position += piece.packets.reduce(Int64(0)) { $0 + Int64(plan.durations[piece.clip][$1]) }
        }
        XCTAssertGreaterThanOrEqual(position - 1024, Int64(needed), "the packets cover the video")
    }

    /// Two clips alternating, of lengths that are not whole frames, over 10 000 seams.
    func testDriftBoundOverManySeams() {
        let plan = SeamPlanner.plan([aac(44100 + 333), aac(30000 + 777)], filling: 5000 * 75210, offset: 0,
                                    loop: true, exactSeams: false)
        XCTAssertGreaterThan(plan.seamErrors.count, 9000)
        XCTAssertLessThanOrEqual(plan.seamErrors.map(\.magnitude).max() ?? 0, 512)
    }

    func testExactSeamsIsTheMultiEditLayout() {
        let plan = SeamPlanner.plan([aac(132300), aac(220500)], filling: 308700, offset: 0, loop: false,
                                    exactSeams: true)
        XCTAssertEqual(plan.edits, [.init(segmentDuration: 132300, mediaTime: 1024),
                                    .init(segmentDuration: 176400, mediaTime: 134348)])
        XCTAssertEqual(plan.pieces.map(\.packets), [0..<131, 0..<174])
    }

    func testClipsThatRunOutEndTheMusic() {
        let plan = SeamPlanner.plan([aac(44100)], filling: 441000, offset: 0, loop: false, exactSeams: false)
        XCTAssertEqual(plan.musicTicks, 44100)
        XCTAssertEqual(plan.edits, [.init(segmentDuration: 44100, mediaTime: 1024)])
    }
}
