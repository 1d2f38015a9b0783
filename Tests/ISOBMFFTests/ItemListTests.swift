import ISOBMFF
import TestSupport
import XCTest

/// The tag model (`ilst`): typed items read and written byte for byte, unknown items kept,
/// damaged ones skipped, keys parsed as the `tag` command takes them.
final class ItemListTests: XCTestCase {
    static func item(_ type: FourCC, _ children: [[UInt8]]) -> [UInt8] {
        var w = BoxWriter()
        w.box(type) { box in for child in children { box.write(bytes: child) } }
        return w.bytes
    }

    static func data(_ type: UInt32, _ bytes: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.fullBox("data", version: 0, flags: type) { data in
            data.write(UInt32(0))
            data.write(bytes: bytes)
        }
        return w.bytes
    }

    static func text(_ type: FourCC, _ text: String) -> [UInt8] {
        var w = BoxWriter()
        w.fullBox(type, version: 0, flags: 0) { $0.write(bytes: Array(text.utf8)) }
        return w.bytes
    }

    static func list(_ items: [[UInt8]]) -> ItemList {
        var w = BoxWriter()
        w.box("ilst") { ilst in for item in items { ilst.write(bytes: item) } }
        var reader = ByteReader(w.bytes)
        guard let (_, payload) = try? reader.readBox(depth: 1) else { return ItemList() }
        return ItemList(parsing: payload)
    }

    func testTypedValuesAreRead() {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2]
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 3]
        let list = Self.list([
            Self.item("©nam", [Self.data(1, Array("Tïtle".utf8))]),
            Self.item("trkn", [Self.data(0, [0, 0, 0, 3, 0, 12, 0, 0])]),
            Self.item("disk", [Self.data(0, [0, 0, 0, 1, 0, 2])]),
            Self.item("tmpo", [Self.data(21, [0, 120])]),
            Self.item("stik", [Self.data(21, [2])]),
            Self.item("cpil", [Self.data(21, [1])]),
            Self.item("gnre", [Self.data(0, [0, 18])]),
            Self.item("covr", [Self.data(13, jpeg), Self.data(14, png)]),
            // Freeform children in an unusual order: data, name, then mean.
            Self.item("----", [Self.data(1, Array("x".utf8)), Self.text("name", "LABEL"),
                               Self.text("mean", "com.apple.iTunes")]),
            Self.item("----", [Self.text("mean", "org.example"), Self.text("name", "BIN"), Self.data(0, [0, 1, 255])]),
        ])
        XCTAssertEqual(list.warnings, [])
        XCTAssertEqual(list[.code("©nam")], .text(["Tïtle"]))
        XCTAssertEqual(list[.code("trkn")], .pair(number: 3, total: 12))
        XCTAssertEqual(list[.code("disk")], .pair(number: 1, total: 2))
        XCTAssertEqual(list[.code("tmpo")], .integer(120))
        XCTAssertEqual(list[.code("stik")], .integer(2))
        XCTAssertEqual(list[.code("cpil")], .flag(true))
        XCTAssertEqual(list[.code("gnre")], .genreNumber(18))
        XCTAssertEqual(list[.code("©gen")], .text(["Rock"]), "gnre shows as ©gen text, as mutagen and FFmpeg show it")
        XCTAssertEqual(list[.code("covr")], .images([TagImage(format: .jpeg, bytes: jpeg), TagImage(format: .png, bytes: png)]))
        XCTAssertEqual(list[.freeform(mean: "com.apple.iTunes", name: "LABEL")], .text(["x"]))
        XCTAssertEqual(list[.freeform(mean: "org.example", name: "BIN")],
                       .data([MetadataBox.Value(dataType: 0, bytes: [0, 1, 255])]))
    }

    func testUnchangedItemsAreWrittenByteForByte() {
        let odd = Self.item("XYZ\u{1}", [Self.data(99, [1, 2, 3]), Self.text("junk", "kept")])
        let title = Self.item("©nam", [Self.data(1, Array("Old".utf8))])
        var list = Self.list([odd, title])
        XCTAssertEqual(Array(list.bytes.dropFirst(8)), odd + title)
        list.set(.text(["New"]), for: .code("©nam"))
        XCTAssertEqual(Array(list.bytes.dropFirst(8)), odd + Self.item("©nam", [Self.data(1, Array("New".utf8))]))
    }

    /// Written forms, byte for byte, as iTunes and mutagen write them.
    func testWrittenBytes() {
        var list = ItemList()
        list.set(.pair(number: 3, total: 12), for: .code("trkn"))
        list.set(.pair(number: 1, total: 2), for: .code("disk"))
        list.set(.integer(128), for: .code("tmpo"))
        list.set(.flag(true), for: .code("cpil"))
        list.set(.text(["v"]), for: .freeform(mean: "com.apple.iTunes", name: "N"))
        XCTAssertEqual(list.bytes, hexBytes("""
            000000BB 696C7374
              00000020 74726B6E  00000018 64617461 00000000 00000000  0000 0003 000C 0000
              0000001E 6469736B  00000016 64617461 00000000 00000000  0000 0001 0002
              0000001A 746D706F  00000012 64617461 00000015 00000000  0080
              00000019 6370696C  00000011 64617461 00000015 00000000  01
              00000042 2D2D2D2D
                0000001C 6D65616E 00000000 636F6D2E 6170706C 652E6954 756E6573
                0000000D 6E616D65 00000000 4E
                00000011 64617461 00000001 00000000 76
            """))
    }

    func testSetReplacesInPlaceAndRemoveDropsAll() {
        var list = Self.list([
            Self.item("©nam", [Self.data(1, [0x41])]), Self.item("©ART", [Self.data(1, [0x42])]),
            Self.item("©nam", [Self.data(1, [0x43])]), Self.item("gnre", [Self.data(0, [0, 1])]),
        ])
        list.set(.text(["T"]), for: .code("©nam"))
        XCTAssertEqual(list.items.map(\.key), [.code("©nam"), .code("©ART"), .code("gnre")])
        list.set(.text(["Jazz"]), for: .code("©gen"))
        XCTAssertEqual(list.items.map(\.key), [.code("©nam"), .code("©ART"), .code("©gen")])
        list.remove(.code("©nam"))
        XCTAssertEqual(list.items.map(\.key), [.code("©ART"), .code("©gen")])
    }

    /// A damaged item is kept byte for byte (other readers may read more of it), with a
    /// warning: an edit never drops it.
    func testDamagedItemIsKeptAsItIsWithAWarning() {
        let good = Self.item("©ART", [Self.data(1, [0x42])])
        // A ---- item without a name, and a data box claiming more bytes than its item has.
        let nameless = Self.item("----", [Self.text("mean", "m"), Self.data(1, [1])])
        var overrun = Self.item("©nam", [Self.data(1, [0x41])])
        overrun[11] = 0x40
        var list = Self.list([nameless, good, overrun, good])
        XCTAssertEqual(list.items.map(\.key), [.code("----"), .code("©ART"), .code("©nam"), .code("©ART")])
        XCTAssertEqual(list.items.map(\.isDamaged), [true, false, true, false])
        XCTAssertEqual(list.items[0].originalBytes, nameless)
        XCTAssertEqual(list.items[2].originalBytes, overrun)
        XCTAssertEqual(list.warnings.count, 2, "\(list.warnings)")
        // Another item set: the damaged ones are written back as they were.
        list.set(.text(["New"]), for: .code("©alb"))
        var reader = ByteReader(list.bytes)
        guard let (_, payload) = try? reader.readBox(depth: 1) else { return XCTFail("no ilst") }
        let again = ItemList(parsing: payload)
        XCTAssertEqual(Array(again.items.compactMap(\.originalBytes).prefix(3)), [nameless, good, overrun])
    }

    func testKeys() throws {
        XCTAssertEqual(TagKey(parsing: "title"), .code("©nam"))
        XCTAssertEqual(TagKey(parsing: "©nam"), .code("©nam"))
        XCTAssertEqual(TagKey(parsing: "aART"), .code("aART"))
        XCTAssertEqual(TagKey(parsing: "----:com.apple.iTunes:MusicBrainz Track Id"),
                       .freeform(mean: "com.apple.iTunes", name: "MusicBrainz Track Id"))
        XCTAssertNil(TagKey(parsing: "titles"))
        XCTAssertNil(TagKey(parsing: "----"))
        XCTAssertNil(TagKey(parsing: "----:onlymean"))
        XCTAssertThrowsError(try TagKey.parse("mood_x")) { error in
            XCTAssertEqual((error as? TagError)?.code, .unknownKey)
            XCTAssertTrue("\(error)".contains("album_artist"))
        }
        XCTAssertEqual(TagKey.code("gnre").friendlyName, "genre")
        XCTAssertEqual(TagKey.code("©nam").description, "©nam")
    }

    func testValuesParsedFromText() throws {
        XCTAssertEqual(try TagValue(parsing: "3/12", for: .code("trkn")), .pair(number: 3, total: 12))
        XCTAssertEqual(try TagValue(parsing: "7", for: .code("disk")), .pair(number: 7, total: 0))
        XCTAssertEqual(try TagValue(parsing: "yes", for: .code("cpil")), .flag(true))
        // mutagen reads tmpo as a signed 16-bit number.
        XCTAssertEqual(try TagValue(parsing: "32767", for: .code("tmpo")), .integer(32767))
        XCTAssertEqual(try TagValue(parsing: "Rock", for: .code("gnre")), .genreNumber(18))
        for (text, key) in [("65536/1", "trkn"), ("x", "trkn"), ("1/2/3", "disk"), ("256", "stik"),
                            ("-1", "tmpo"), ("32768", "tmpo"), ("maybe", "cpil"), ("Nope", "gnre")] {
            XCTAssertThrowsError(try TagValue(parsing: text, for: .code(FourCC(key)!)), "\(key)=\(text)") { error in
                XCTAssertEqual((error as? TagError)?.code, .invalidValue)
            }
        }
    }

    func testUserDataKeepsOtherBoxesAndAddsMetaWhereMissing() {
        let chpl: [UInt8] = hexBytes("0000000D 6368706C 01000000 00")
        var udta = BoxWriter()
        udta.box("udta") { box in
            box.write(bytes: chpl)
            box.fullBox("meta", version: 0, flags: 0) { meta in
                HandlerBox(handlerType: "mdir", name: "").write(to: &meta)
                meta.box("ilst") { $0.write(bytes: Self.item("©nam", [Self.data(1, [0x41])])) }
                meta.box("free") { $0.write(UInt32(0)) }
            }
        }
        var list = ItemList(userData: udta.bytes)
        XCTAssertEqual(list[.code("©nam")], .text(["A"]))
        list.set(.text(["B"]), for: .code("©ART"))
        let rewritten = list.userData(replacingIn: udta.bytes) ?? []
        XCTAssertEqual(Array(rewritten[8..<21]), chpl)
        let reread = ItemList(userData: rewritten)
        XCTAssertEqual(reread.items.map(\.value), [.text(["A"]), .text(["B"])])
        XCTAssertEqual(Array(rewritten.suffix(12)), hexBytes("0000000C 66726565 00000000"), "free stays after ilst")

        var fresh = ItemList()
        XCTAssertNil(fresh.userData(replacingIn: nil))
        fresh.set(.text(["T"]), for: .code("©nam"))
        XCTAssertEqual(ItemList(userData: fresh.userData(replacingIn: nil) ?? [])[.code("©nam")], .text(["T"]))
    }

    func testNeroChaptersRoundTrip() throws {
        let long = String(repeating: "é", count: 200)  // 400 bytes: cut to 254, a whole character.
        let chapters = NeroChapters(entries: [.init(title: "Intro", start: 0), .init(title: long, start: 1.25)])
        XCTAssertEqual(Array(chapters.bytes.prefix(31)), hexBytes("""
            00000126 6368706C 01000000 00000000 02  0000000000000000 05 496E74726F
            """))
        var reader = ByteReader(chapters.bytes)
        let (_, payload) = try XCTUnwrap(try reader.readBox(depth: 1))
        let parsed = try NeroChapters(parsing: payload)
        XCTAssertEqual(parsed.entries.map(\.start), [0, 1.25])
        XCTAssertEqual(parsed.entries[1].title, String(repeating: "é", count: 127))
        let userData = NeroChapters.userData(nil, replacingWith: chapters) ?? []
        XCTAssertEqual(NeroChapters(userData: userData), parsed)
        XCTAssertEqual(NeroChapters.userData(userData, replacingWith: nil), hexBytes("00000008 75647461"))
    }

    func testChapterTrackSamplesAndSampleEntry() throws {
        // Unsorted, a late first chapter, starts rounded to milliseconds.
        let track = try ChapterTrack(chapters: [.init(title: "B", start: 2.0004), .init(title: "A", start: 0.5)],
                                     endingAt: 3)
        XCTAssertEqual(track.chapters, [.init(title: "A", start: 0.5), .init(title: "B", start: 2)])
        XCTAssertEqual(track.durations, [1500, 1000])
        XCTAssertEqual(track.leadingEmpty, 500)
        XCTAssertEqual(track.edits(movieTimescale: 600), [.init(segmentDuration: 300, mediaTime: -1),
                                                         .init(segmentDuration: 1500, mediaTime: 0)])
        // length 1, "A", then encd (12 bytes) saying UTF-8.
        XCTAssertEqual(track.samples[0], hexBytes("0001 41 0000000C 656E6364 00000100"))
        // FFmpeg's chapter sample entry (movenc.c), byte for byte.
        XCTAssertEqual(ChapterTrack.sampleEntry, hexBytes("""
            0000003B 74657874 000000000000 0001 00000001 0000 00000000 0000000000000000 00000000 0001 00 00
            00000000 0000000D 66746162 0001 0001 00
            """))
        XCTAssertThrowsError(try ChapterTrack(chapters: [.init(title: "late", start: 4)], endingAt: 3))
        let many = (0...Limits.maximumChapterCount).map { Chapter(title: "\($0)", start: 0) }
        XCTAssertThrowsError(try ChapterTrack(chapters: many, endingAt: 3))
    }

    /// A sample lasts at most 2^32 − 1 ms: the last chapter of a movie claiming 26 million
    /// years (Fixtures/fuzz/elst-two-empty-edits-4e17.mp4) keeps its start and its track ends
    /// 49.7 days after it; a longer chapter before another is refused.
    func testTheLastChapterOfAnEndlessMovieEndsWithItsSample() throws {
        let track = try ChapterTrack(chapters: [.init(title: "A", start: 0), .init(title: "B", start: 2)],
                                     endingAt: 8.4e14)
        XCTAssertEqual(track.durations, [2000, UInt32.max])
        XCTAssertEqual(track.end, 2000 + UInt64(UInt32.max))
        XCTAssertEqual(track.mediaDuration, 2000 + UInt64(UInt32.max))
        XCTAssertThrowsError(try ChapterTrack(chapters: [.init(title: "A", start: 0), .init(title: "B", start: 5e6)],
                                              endingAt: 6e6)) { error in
            XCTAssertEqual((error as? ISOBMFFError)?.code, .limitExceeded)
        }
    }
}
