import ISOBMFF
import TestSupport
import XCTest

/// `udta` read once: children kept byte for byte, typed views of `meta` and `chpl`, and a
/// damaged child reported the same way to every reader and editor.
final class UserDataBoxTests: XCTestCase {
    /// A `udta` of a `©xyz` box, a `meta` (full box: hdlr, ilst with ©nam "A", free) and a
    /// `chpl`, then whatever `tail` adds.
    static func userData(tail: [UInt8] = []) -> [UInt8] {
        var w = BoxWriter()
        w.box("udta") { udta in
            udta.box("\u{A9}xyz") { $0.write(bytes: Array("+1+2/".utf8)) }
            udta.fullBox("meta", version: 0, flags: 0) { meta in
                HandlerBox(handlerType: "mdir", name: "").write(to: &meta)
                meta.box("ilst") { ilst in
                    ilst.box("\u{A9}nam") { item in
                        item.fullBox("data", version: 0, flags: 1) { $0.write(UInt32(0)); $0.write(bytes: [0x41]) }
                    }
                }
                meta.box("free") { $0.write(UInt32(0)) }
            }
            udta.write(bytes: NeroChapters(entries: [Chapter(title: "C", start: 1)]).bytes)
            udta.write(bytes: tail)
        }
        return w.bytes
    }

    func testChildrenAreReadOnceAndKeptByteForByte() throws {
        let bytes = Self.userData()
        let udta = try XCTUnwrap(UserDataBox(parsing: bytes))
        XCTAssertEqual(udta.children.map(\.type), ["\u{A9}xyz", "meta", "chpl"])
        XCTAssertNil(udta.damage)
        XCTAssertEqual(udta.bytes { $0.bytes }, bytes, "kept children are written back as they were")
        XCTAssertEqual(udta.neroChapters?.entries.map(\.title), ["C"])
        let meta = try XCTUnwrap(udta.metadata.first)
        XCTAssertTrue(meta.isFullBox)
        XCTAssertEqual(meta.handlerType, "mdir")
        XCTAssertEqual(meta.children.map(\.type), [.hdlr, "ilst", "free"])
        XCTAssertEqual(meta.items.map(\.type), ["\u{A9}nam"])
        XCTAssertEqual(meta.items.first?.values.first?.text, "A")
        let dropped = udta.bytes({ $0.type == "chpl" ? nil : $0.bytes }, appending: { [hexBytes("00000008 66726565")] })
        XCTAssertEqual(try XCTUnwrap(UserDataBox(parsing: dropped)).children.map(\.type), ["\u{A9}xyz", "meta", "free"])
        XCTAssertNil(UserDataBox(parsing: [0, 0, 0]), "not a box")
    }

    func testDamagedChildIsReportedToEveryReader() throws {
        // A child claiming 64 bytes where 12 are left: it and what follows cannot be told apart.
        let bytes = Self.userData(tail: hexBytes("00000040 62616421 00000000"))
        let udta = try XCTUnwrap(UserDataBox(parsing: bytes))
        XCTAssertEqual(udta.children.map(\.type), ["\u{A9}xyz", "meta", "chpl"])
        let damage = try XCTUnwrap(udta.damage)
        XCTAssertEqual(damage.parent, "udta")
        XCTAssertEqual(damage.offset, UInt64(bytes.count - 12))
        // The tag model says where it stops, so that an edit never writes the list back short.
        let list = ItemList(userData: bytes)
        XCTAssertEqual(list[.code("\u{A9}nam")], .text(["A"]))
        XCTAssertEqual(list.unreadableFrom, damage.offset)
        XCTAssertEqual(NeroChapters(userData: bytes)?.entries.map(\.title), ["C"])
    }
}
