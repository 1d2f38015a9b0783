import ISOBMFF
import TestSupport
import XCTest

/// `BoxWalker.first(_:in:depth:)` and `firstChild(_:of:)`, the query by which tags and
/// chapters find a child (`udta`, `mvhd`, `tkhd`): the first of its type, the boxes before
/// it read as `readBox` reads them (a damaged one throws), none after it.
final class BoxWalkerFirstTests: XCTestCase {
    /// A `moov` (40 bytes) of a `free`, a `udta` holding "AAAA", a second `udta`, then `tail`.
    static func movieBox(head: [UInt8] = [], tail: [UInt8] = []) -> [UInt8] {
        let children = head + hexBytes("00000008 66726565  0000000C 75647461 41414141  00000008 75647461") + tail
        let size = UInt32(8 + children.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array("moov".utf8) + children
    }

    func testFirstChildIsTheFirstOfItsTypeWithItsHeader() throws {
        XCTAssertEqual(try BoxWalker.firstChild("udta", of: Self.movieBox()), hexBytes("0000000C 75647461 41414141"))
        XCTAssertNil(try BoxWalker.firstChild("mvhd", of: Self.movieBox()))
        XCTAssertNil(try BoxWalker.firstChild("udta", of: []))
    }

    func testFirstGivesThePayloadAndItsOffset() throws {
        var reader = ByteReader(Self.movieBox())
        let moov = try XCTUnwrap(try reader.readBox(depth: 1))
        var (header, payload) = try XCTUnwrap(try BoxWalker.first("udta", in: moov.payload, depth: 2))
        XCTAssertEqual(header.offset, 16)
        XCTAssertEqual(header.path, "moov/udta")
        XCTAssertEqual(try payload.readUInt32(), 0x4141_4141)
        XCTAssertEqual(payload.remaining, 0)
    }

    /// A damaged child before the one asked for throws its error (a lenient caller's `try?`
    /// then finds none, as players stop there); one after it is never read.
    func testADamagedChildThrowsOnlyBeforeTheOneFound() throws {
        let damaged = hexBytes("00000004 66726565")  // size 4: smaller than its header
        XCTAssertThrowsError(try BoxWalker.firstChild("udta", of: Self.movieBox(head: damaged))) {
            XCTAssertEqual(($0 as? ISOBMFFError)?.code, .invalidBoxSize)
        }
        XCTAssertNil(try? BoxWalker.firstChild("udta", of: Self.movieBox(head: damaged)))
        XCTAssertEqual(try BoxWalker.firstChild("udta", of: Self.movieBox(tail: damaged)),
                       hexBytes("0000000C 75647461 41414141"))
        XCTAssertThrowsError(try BoxWalker.firstChild("mvhd", of: Self.movieBox(tail: damaged)))
    }
}
