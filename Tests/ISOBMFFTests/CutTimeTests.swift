import ISOBMFF
import XCTest

/// The time syntax of `--from/--to/--duration`: seconds or `[[h:]m:]s[.frac]`.
final class CutTimeTests: XCTestCase {
    func testAcceptedForms() {
        let cases: [(String, UInt64)] = [
            ("90", 90_000_000_000), ("2.52", 2_520_000_000), ("0", 0), ("1:30", 90_000_000_000),
            ("01:02:03.5", 3_723_500_000_000), ("0:00.000000001", 1), ("10:00", 600_000_000_000),
            ("100:00:00", 360_000_000_000_000), ("7.280", 7_280_000_000),
        ]
        for (text, nanoseconds) in cases {
            XCTAssertEqual(try? CutTime(parsing: text).nanoseconds, nanoseconds, text)
        }
    }

    func testRefusedForms() {
        for text in ["", "-1", "+1", "1e3", "1.2.3", "1:2:3:4", ".5", "5.", "1:60", "1:00:60", "1.0000000001",
                     "1:", ":1", "1,5", " 1", "inf", "nan", "٣", "99999999999999999999"] {
            XCTAssertThrowsError(try CutTime(parsing: text), text) { error in
                // Issue 30: a typo is an error naming the value, never "to the end".
                XCTAssertEqual((error as? ISOBMFFError)?.code, .invalidValue, text)
                XCTAssertTrue("\(error)".contains("'\(text)' is not a time"), "\(error)")
            }
        }
    }

    /// Ticks round to the nearest: 2.52 s is frame 63 at 25 fps and 120960 at 48 kHz.
    func testTicks() {
        let time = CutTime(nanoseconds: 2_520_000_000)
        XCTAssertEqual(time.ticks(25), 63)
        XCTAssertEqual(time.ticks(48000), 120_960)
        XCTAssertEqual(CutTime(nanoseconds: 550_000_000).ticks(10, rounding: .down), 5)  // In tick 5.
        XCTAssertEqual(CutTime(nanoseconds: 550_000_000).ticks(10, rounding: .up), 6)
        XCTAssertEqual(CutTime(nanoseconds: 500_000_000).ticks(10, rounding: .up), 5)  // On an edge: exact.
        XCTAssertEqual(CutTime(nanoseconds: UInt64.max).ticks(UInt32.max), nil)
        XCTAssertEqual(time.description, "2.520")
    }
}
