import ISOBMFF
import TestSupport
import XCTest

/// The one rule that finds a `moov`'s covers from headers alone (`UserDataBox.CoverBoxes`,
/// over `BoxWalker.children`), shared by the tag edit that leaves large covers in the file
/// and by `TagRewritePlan.splicing`, which puts them back.
final class CoverBoxesTests: XCTestCase {
    /// A `moov` of an `mvhd`-sized `free`, then `udta/meta/ilst` holding `©nam` and a `covr`
    /// of two `data` boxes (JPEG, type 13) with `first` and `second` as images; `meta` a full
    /// box, or QuickTime's plain one (`hdlr` first) when `plainMeta`.
    static func movieBox(first: [UInt8], second: [UInt8], plainMeta: Bool = false,
                         moovTail: [UInt8] = [], udtaTail: [UInt8] = [], covrTail: [UInt8] = []) -> [UInt8] {
        func items(_ meta: inout BoxWriter) {
            HandlerBox(handlerType: "mdir", name: "").write(to: &meta)
            meta.box("ilst") { ilst in
                ilst.box("\u{A9}nam") { item in
                    item.fullBox("data", version: 0, flags: 1) { $0.write(UInt32(0)); $0.write(bytes: [0x41]) }
                }
                ilst.box("covr") { covr in
                    covr.fullBox("data", version: 0, flags: 13) { $0.write(UInt32(0)); $0.write(bytes: first) }
                    covr.fullBox("data", version: 0, flags: 13) { $0.write(UInt32(0)); $0.write(bytes: second) }
                    covr.write(bytes: covrTail)
                }
            }
        }
        var w = BoxWriter()
        w.box("moov") { moov in
            moov.box("free") { $0.writeZeros(100) }
            moov.box("udta") { udta in
                if plainMeta {
                    udta.box("meta") { items(&$0) }
                } else {
                    udta.fullBox("meta", version: 0, flags: 0) { items(&$0) }
                }
                udta.write(bytes: udtaTail)
            }
            moov.write(bytes: moovTail)
        }
        return w.bytes
    }

    /// A source that counts the bytes read from it.
    final class CountingSource: ByteSource, @unchecked Sendable {
        let bytes: MemoryByteSource
        var read = 0
        init(_ data: [UInt8]) { bytes = MemoryByteSource(data) }
        var length: UInt64 { bytes.length }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
            read += buffer.count
            try bytes.read(into: buffer, at: offset)
        }
    }

    func testFindsThePathAndTheDataBoxesFromHeadersAlone() throws {
        let image = [UInt8](repeating: 0xAB, count: 100_000)
        let bytes = Self.movieBox(first: [1, 2, 3], second: image)
        let source = CountingSource(bytes)
        var reader = ByteReader(bytes)
        let moov = try XCTUnwrap(try reader.readBox(depth: 1)).header
        let found = try XCTUnwrap(try UserDataBox.CoverBoxes(movie: moov, in: source))
        XCTAssertEqual(found.path.map(\.type), ["moov", "udta", "meta", "ilst", "covr"])
        XCTAssertEqual(found.dataBoxes.map(\.size), [16 + 3, 16 + 100_000])
        XCTAssertEqual(found.dataBoxes[1].end, found.path[4].end)
        XCTAssertEqual(Array(bytes[Int(found.dataBoxes[1].offset + 16)...].prefix(2)), [0xAB, 0xAB])
        // Headers (and meta's first 8 bytes), not the image.
        XCTAssertLessThan(source.read, 400)
        let plain = Self.movieBox(first: [1], second: [2], plainMeta: true)
        var plainReader = ByteReader(plain)
        let plainMoov = try XCTUnwrap(try plainReader.readBox(depth: 1)).header
        XCTAssertEqual(try UserDataBox.CoverBoxes(movie: plainMoov, in: MemoryByteSource(plain))?.dataBoxes.count, 2)
    }

    func testSiblingsMayHaveAnyHeaderTheBoxesOnThePathNot() throws {
        // A uuid in moov (as Sony's cameras write) and a free with a 64-bit largesize in udta:
        // siblings, whose sizes do not change.
        let uuid: [UInt8] = hexBytes("0000001C 75756964 00112233 44556677 8899AABB CCDDEEFF 00000000")
        let large: [UInt8] = hexBytes("00000001 66726565 00000000 00000010")
        let bytes = Self.movieBox(first: [1], second: [2], moovTail: uuid, udtaTail: large)
        var reader = ByteReader(bytes)
        let moov = try XCTUnwrap(try reader.readBox(depth: 1)).header
        XCTAssertEqual(try UserDataBox.CoverBoxes(movie: moov, in: MemoryByteSource(bytes))?.dataBoxes.count, 2)
        XCTAssertEqual(try TagRewritePlan.splicing(bytes, images: [.init(dataBox: 0, count: 5)]).count, 3)
        // A data box of covr with a 64-bit largesize: its size cannot be patched in place, so
        // neither the layout nor splicing takes the path.
        let largeData: [UInt8] = hexBytes("00000001 64617461 00000000 00000018 0000000D 00000000")
        let refused = Self.movieBox(first: [1], second: [2], covrTail: largeData)
        var refusedReader = ByteReader(refused)
        let refusedMoov = try XCTUnwrap(try refusedReader.readBox(depth: 1)).header
        XCTAssertNil(try UserDataBox.CoverBoxes(movie: refusedMoov, in: MemoryByteSource(refused)))
        XCTAssertThrowsError(try TagRewritePlan.splicing(refused, images: [.init(dataBox: 0, count: 5)])) {
            XCTAssertEqual(($0 as? ISOBMFFError)?.code, .missingBox)
        }
    }

    func testSplicingGrowsEveryBoxOnThePathByTheImage() throws {
        let hollow = Self.movieBox(first: [9], second: [])
        let pieces = try TagRewritePlan.splicing(hollow, images: [.init(dataBox: 1, count: 1000)])
        XCTAssertEqual(pieces.count, 3)
        guard case .write(let head) = pieces[0], case .image(0, 1000) = pieces[1],
              case .write(let tail) = pieces[2] else { return XCTFail("pieces \(pieces)") }
        XCTAssertEqual(head.count + tail.count, hollow.count)
        // The image is the second data box's payload, at the end of covr, ilst, meta, udta
        // and moov: each grows by 1000.
        let whole = head + [UInt8](repeating: 0xCD, count: 1000) + tail
        XCTAssertEqual(whole, Self.movieBox(first: [9], second: [UInt8](repeating: 0xCD, count: 1000)))
    }

    func testChildrenAreNilWhenABoxRunsPastTheRange() throws {
        let bytes: [UInt8] = hexBytes("00000008 66726565 00000010 66726565 0000")
        XCTAssertEqual(try BoxWalker.children(in: MemoryByteSource(bytes), filling: 0..<8)?.map(\.type), ["free"])
        XCTAssertNil(try BoxWalker.children(in: MemoryByteSource(bytes), filling: 0..<18))
        XCTAssertNil(try BoxWalker.children(in: MemoryByteSource(bytes), filling: 0..<12))  // 4 stray bytes
    }
}
