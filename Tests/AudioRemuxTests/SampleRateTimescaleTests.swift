@testable import AudioRemux
import ISOBMFF
import XCTest

/// ``SampleRateTimescale``: when a cut's audio can count in its sample rate, and where its
/// edits land. The durations are a Smooth Streaming muxer's: 1024 samples at 44100 Hz are
/// 232199.55 ticks of 10 MHz, written 232200 or 232199 as the running total rounds.
final class SampleRateTimescaleTests: XCTestCase {
    let smooth: [UInt32] = [232_200, 232_200, 232_199, 232_200, 61_678]  // The last: 272 samples.

    func testSmoothDurationsBecomeWholePackets() throws {
        let retimed = try XCTUnwrap(SampleRateTimescale(durations: smooth, timescale: 10_000_000, rate: 44_100))
        XCTAssertEqual(retimed.durations, [1024, 1024, 1024, 1024, 272])
        // 247619 ticks: inside the second packet, 15419 ticks (68 samples) into it.
        XCTAssertEqual(retimed.samples(247_619), 1024 + 68)
        XCTAssertEqual(retimed.samples(0), 0)
        XCTAssertEqual(retimed.samples(smooth.reduce(0) { $0 + UInt64($1) }), 4 * 1024 + 272)
        XCTAssertNil(retimed.samples(10_000_000), "past the packets")
        let edits = try XCTUnwrap(retimed.edits([.init(segmentDuration: 5_000, mediaTime: -1),
                                                 .init(segmentDuration: 25_000_000, mediaTime: 247_619)]))
        XCTAssertEqual(edits.map(\.mediaTime), [-1, 1092])
        XCTAssertEqual(edits.map(\.segmentDuration), [5_000, 25_000_000], "segments count in the movie's timescale")
    }

    func testDurationsThatAreNoWholeNumberOfSamplesKeepTheTimescale() {
        // 232000 ticks are 1023.12 samples: no packet lasts that.
        XCTAssertNil(SampleRateTimescale(durations: [232_200, 232_000], timescale: 10_000_000, rate: 44_100))
        XCTAssertNil(SampleRateTimescale(durations: [1024], timescale: 44_100, rate: 44_100), "already the rate")
        XCTAssertNil(SampleRateTimescale(durations: [1024], timescale: 0, rate: 44_100))
        XCTAssertNil(SampleRateTimescale(durations: [UInt32.max], timescale: 1, rate: 48_000), "overflows 32 bits")
    }
}
