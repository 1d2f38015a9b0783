import ISOBMFF
import XCTest

/// Issue 20, point 4: `FourCC("©nam")` trapped, as `©` is two bytes in UTF-8. Apple's
/// text item types start with the byte 0xA9 (Latin-1 `©`): literals of four Latin-1
/// characters give their bytes, and codes made at run time go through a failable init.
final class FourCCTests: XCTestCase {
    func testLatin1LiteralsAreTheirBytes() {
        let literals: [(FourCC, UInt32)] = [
            ("©nam", 0xA96E_616D), ("©ART", 0xA941_5254), ("©alb", 0xA961_6C62), ("©day", 0xA964_6179),
            ("©too", 0xA974_6F6F), ("moov", 0x6D6F_6F76), ("raw ", 0x7261_7720), ("----", 0x2D2D_2D2D),
        ]
        for (code, raw) in literals {
            XCTAssertEqual(code.rawValue, raw, "\(code)")
            XCTAssertEqual(code, FourCC(rawValue: raw))
        }
        // A literal in a pattern, as the parsers switch over item types.
        switch FourCC(rawValue: 0xA96E_616D) {
        case "©nam": break
        default: XCTFail("©nam does not match its literal")
        }
    }

    func testRunTimeTextGivesTheCodeOrNil() {
        XCTAssertEqual(FourCC(String("©nam")), FourCC(rawValue: 0xA96E_616D))
        XCTAssertEqual(FourCC(String("mdta")), FourCC(rawValue: 0x6D64_7461))
        XCTAssertEqual(FourCC("\u{0}\u{0}\u{0}\u{1}" as String), FourCC(rawValue: 1))
        XCTAssertEqual(FourCC("ÿÿÿÿ" as String), FourCC(rawValue: 0xFFFF_FFFF))
        for text in ["", "abc", "abcde", "©na", "©name", "€abc", "ab\u{301}c", "abc\u{100}", "🎵abc"] {
            XCTAssertNil(FourCC(text), text)
        }
    }

    func testDescriptionPrintsTheCopyrightSign() {
        XCTAssertEqual(FourCC(rawValue: 0xA96E_616D).description, "©nam")
        XCTAssertEqual(FourCC(rawValue: 0x6D6F_6F76).description, "moov")
        XCTAssertEqual(FourCC(rawValue: 0x0000_0001).description, "\\x00\\x00\\x00\\x01")
        XCTAssertEqual(FourCC(rawValue: 0xFF6E_616D).description, "\\xffnam")
        // What it prints for ASCII and ©, the failable init reads back.
        for code: FourCC in ["©nam", "©ART", "stsz", "raw "] {
            XCTAssertEqual(FourCC(code.description), code)
        }
    }
}
