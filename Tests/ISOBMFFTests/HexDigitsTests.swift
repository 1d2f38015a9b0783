import ISOBMFF
import XCTest

/// The one hex formatter (`hexDigits`) of messages, codec strings and tag text.
final class HexDigitsTests: XCTestCase {
    func testHexDigits() {
        XCTAssertEqual(UInt8(0x0A).hexDigits(), "0a")
        XCTAssertEqual(UInt8(0xFF).hexDigits(uppercase: true), "FF")
        XCTAssertEqual(UInt32(0x1F).hexDigits(4), "001f")
        XCTAssertEqual(UInt64(0x1_0000_0000).hexDigits(8, uppercase: true), "100000000")
        XCTAssertEqual(UInt32(0).hexDigits(1), "0")
    }
}
