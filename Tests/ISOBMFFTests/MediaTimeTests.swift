import ISOBMFF
import XCTest

/// `MediaTime`: ticks with their timescale, every operation checked (issue 29). The values
/// are worked by hand from the definitions, not read back from the type.
final class MediaTimeTests: XCTestCase {
    func testSecondsBecomeTicksRoundedAsAsked() throws {
        XCTAssertEqual(MediaTime(seconds: 2.52, timescale: 25)?.ticks, 63)
        XCTAssertEqual(MediaTime(seconds: 0.55, timescale: 10, rounding: .down)?.ticks, 5)
        XCTAssertEqual(MediaTime(seconds: 0.55, timescale: 10, rounding: .up)?.ticks, 6)
        XCTAssertEqual(MediaTime(seconds: -1.5, timescale: 2)?.ticks, -3)
        XCTAssertEqual(MediaTime(seconds: 1, timescale: 48000)?.seconds, 1)
    }

    /// What a file claims may be anything: never a trap, nil instead.
    func testSecondsOutOfRangeAreNil() {
        for seconds in [Double.nan, .infinity, -.infinity, 1e30, 9.3e18, -9.3e18] {
            XCTAssertNil(MediaTime(seconds: seconds, timescale: 1), "\(seconds)")
        }
        XCTAssertNil(MediaTime(seconds: 1, timescale: 0))
        XCTAssertNil(MediaTime(ticks: UInt64.max, timescale: 1000))
        XCTAssertNil(MediaTime(ticks: 5, timescale: 0))
        // 2^63 is not an Int64; 2^63 − 1024 (exact in Double) is.
        XCTAssertNil(MediaTime.integer(9_223_372_036_854_775_808.0))
        XCTAssertEqual(MediaTime.integer(9_223_372_036_854_774_784.0), 9_223_372_036_854_774_784)
    }

    func testClampingKeepsTheNearestCountableTime() {
        XCTAssertEqual(MediaTime(clampingSeconds: .nan, timescale: 1000)?.ticks, 0)
        XCTAssertEqual(MediaTime(clampingSeconds: -5, timescale: 1000)?.ticks, 0)
        XCTAssertEqual(MediaTime(clampingSeconds: 1e300, timescale: 1000)?.ticks, .max)
        XCTAssertEqual(MediaTime(clampingSeconds: .infinity, timescale: 1000)?.ticks, .max)
        XCTAssertEqual(MediaTime(clampingSeconds: 1.25, timescale: 1000)?.ticks, 1250)
        XCTAssertNil(MediaTime(clampingSeconds: 1, timescale: 0))
        // A Nero chapter 2^63 × 100 ns in (Fixtures/fuzz/chpl-chapter-start-2e63.mp4).
        XCTAssertEqual(CutTime(clampingSeconds: 9.223372036854775808e11).nanoseconds, UInt64(Int64.max))
    }

    func testRescalingIsExactIn128Bits() throws {
        let time = try XCTUnwrap(MediaTime(ticks: 1001, timescale: 30000))
        XCTAssertEqual(time.rescaled(to: 90000)?.ticks, 3003)
        XCTAssertEqual(time.rescaled(to: 1000)?.ticks, 33)  // 33.3666… ms.
        XCTAssertEqual(time.rescaled(to: 1000, rounding: .up)?.ticks, 34)
        let negative = try XCTUnwrap(MediaTime(ticks: -1001, timescale: 30000))
        XCTAssertEqual(negative.rescaled(to: 1000, rounding: .down)?.ticks, -34)  // Toward −∞.
        XCTAssertEqual(negative.rescaled(to: 1000, rounding: .up)?.ticks, -33)
        // Int64.max ticks of a 1 Hz clock at 48 kHz leaves 64 bits: nil, no trap.
        XCTAssertNil(MediaTime(ticks: Int64.max, timescale: 1)?.rescaled(to: 48000))
        // 9,223,372,036,854,775,807 / 48,000 = 192,153,584,101,141 remainder 7,807: to nearest, down.
        XCTAssertEqual(MediaTime(ticks: Int64.max, timescale: 48000)?.rescaled(to: 1)?.ticks, 192_153_584_101_141)
        XCTAssertEqual(MediaTime(ticks: Int64.max, timescale: 48000)?.rescaled(to: 1, rounding: .up)?.ticks,
                       192_153_584_101_142)
    }

    func testSumsAndComparisonsAcrossTimescales() throws {
        let second = try XCTUnwrap(MediaTime(ticks: 48000, timescale: 48000))
        let alsoSecond = try XCTUnwrap(MediaTime(ticks: 1000, timescale: 1000))
        XCTAssertEqual(second, alsoSecond)
        XCTAssertEqual(second.hashValue, alsoSecond.hashValue)
        XCTAssertLessThan(try XCTUnwrap(MediaTime(ticks: 999, timescale: 1000)), second)
        XCTAssertLessThan(try XCTUnwrap(MediaTime(ticks: -1, timescale: 1)), try XCTUnwrap(MediaTime(ticks: 0, timescale: 7)))
        XCTAssertEqual(second.adding(alsoSecond)?.ticks, 96000)
        XCTAssertEqual(second.subtracting(try XCTUnwrap(MediaTime(ticks: 3, timescale: 2)))?.ticks, -24000)
        // Two empty edits of 4.2e17 ticks: their sum fits; three do not (Int64 ends at 9.2e18)…
        let edit = try XCTUnwrap(MediaTime(ticks: 4_200_000_000_000_000_000 as Int64, timescale: 600))
        XCTAssertNotNil(edit.adding(edit))
        XCTAssertNil(try XCTUnwrap(MediaTime(ticks: Int64.max - 1, timescale: 600)).adding(edit))
        XCTAssertNil(try XCTUnwrap(MediaTime(ticks: Int64.min + 1, timescale: 600)).subtracting(edit))
    }

    func testTextNeverTraps() {
        XCTAssertEqual(MediaTime.text(seconds: 2.52), "2.520")
        XCTAssertEqual(MediaTime.text(seconds: 0.0005, decimals: 3), "0.001")
        XCTAssertEqual(MediaTime.text(seconds: -1.25, decimals: 1), "-1.3")
        XCTAssertEqual(MediaTime.text(seconds: 7, decimals: 0), "7")
        XCTAssertEqual(MediaTime.text(seconds: 1.8446744073709552e19), "1.8446744073709552e+19")
        XCTAssertEqual(MediaTime.text(seconds: .nan), "nan")
        XCTAssertEqual(MediaTime.clock(seconds: 3723.5), "01:02:03.500")
        XCTAssertEqual(MediaTime.clock(seconds: -2), "00:00:00.000")
        XCTAssertEqual(MediaTime.clock(seconds: 1.8446744073709552e16), "1.844674407370955e+16 s")
        XCTAssertEqual(MediaTime(ticks: 1001, timescale: 30000)?.description, "0.033 s")
    }
}
