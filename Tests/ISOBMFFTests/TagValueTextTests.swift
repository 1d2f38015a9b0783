import ISOBMFF
import XCTest

/// One table of what each item holds: `probe`'s text of a value is the tag model's typed
/// value shown as `tag` shows it, and the data type's own reading where the key types none.
final class TagValueTextTests: XCTestCase {
    func text(_ code: FourCC, _ type: UInt32, _ bytes: [UInt8]) -> String? {
        TagValue.text(of: MetadataBox.Value(dataType: type, bytes: bytes), key: .code(code))
    }

    func testTypedValuesAreShownAsTagShowsThem() {
        XCTAssertEqual(text("trkn", 0, [0, 0, 0, 3, 0, 12, 0, 0]), "3/12")
        XCTAssertEqual(text("disk", 0, [0, 0, 0, 1, 0, 0]), "1")
        XCTAssertEqual(text("gnre", 0, [0, 9]), "Jazz")
        // iTunes 6 wrote gnre as type 18 (corpus atl_itunes6_qt_chapters.m4v): mutagen and
        // ffprobe read "Blues" all the same.
        XCTAssertEqual(text("gnre", 18, [0, 1]), "Blues")
        XCTAssertEqual(TagValue(values: [MetadataBox.Value(dataType: 18, bytes: [0, 1])], kind: .genreNumber),
                       .genreNumber(1))
        XCTAssertEqual(text("cpil", 21, [1]), "true")
        XCTAssertEqual(text("pgap", 21, [0]), "false")
        XCTAssertEqual(text("tmpo", 21, [0, 120]), "120")
        // stik in the implicit type, as some writers store it: a number, as FFmpeg shows it.
        XCTAssertEqual(text("stik", 0, [10]), "10")
        XCTAssertNil(text("covr", 13, [0xFF, 0xD8, 0xFF, 0xE0]))
    }

    func testOtherValuesAreReadAsTheirDataTypeSays() {
        XCTAssertEqual(text("\u{A9}nam", 1, Array("Title".utf8)), "Title")
        XCTAssertEqual(text("\u{A9}nam", 21, [0xFF, 0xFE]), "-2", "an integer where text was expected")
        XCTAssertEqual(text("itnu", 22, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), "18446744073709551615")
        XCTAssertNil(text("\u{A9}nam", 21, [1, 2, 3, 4, 5]), "no integer of 5 bytes")
        XCTAssertNil(text("\u{A9}nam", 23, [0x3F, 0x80, 0, 0]), "a float is not shown")
        XCTAssertEqual(MetadataBox.Value(dataType: 21, bytes: [0x80]).integer(signed: true), -128)
        XCTAssertEqual(MetadataBox.Value(dataType: 22, bytes: [0x80]).integer(signed: false), 128)
        XCTAssertNil(MetadataBox.Value(dataType: 22, bytes: [UInt8](repeating: 0xFF, count: 8)).integer(signed: false))
    }
}
