import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Metadata and gapless information survive extraction byte for byte; `--no-metadata`
/// drops them.
final class MetadataTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    static func box(_ type: FourCC, _ body: (inout BoxWriter) -> Void) -> [UInt8] {
        var w = BoxWriter()
        w.box(type, body)
        return w.bytes
    }

    static func dataItem(_ type: FourCC, dataType: UInt32, _ value: [UInt8]) -> [UInt8] {
        box(type) { item in
            item.fullBox("data", version: 0, flags: dataType) { data in
                data.write(UInt32(0))
                data.write(bytes: value)
            }
        }
    }

    /// `udta/meta/ilst` with a title, an artist, a track number, two cover images and a
    /// freeform item, plus a QuickTime `©enc`-style item and Nero chapters, as iTunes and
    /// others write them.
    static func richUserData(extraItems: [[UInt8]] = []) -> [UInt8] {
        let items = [
            dataItem(FourCC(rawValue: 0xA96E_616D), dataType: 1, Array("A title".utf8)),  // ©nam
            dataItem(FourCC(rawValue: 0xA941_5254), dataType: 1, Array("An artist".utf8)),
            dataItem("trkn", dataType: 0, [0, 0, 0, 3, 0, 12, 0, 0]),
            dataItem("covr", dataType: 13, [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 300)),
            dataItem("covr", dataType: 14, [0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 9, count: 200)),
        ] + extraItems
        return box("udta") { udta in
            udta.fullBox("meta", version: 0, flags: 0) { meta in
                HandlerBox(handlerType: "mdir", name: "").write(to: &meta)
                meta.box("ilst") { ilst in for item in items { ilst.write(bytes: item) } }
            }
            udta.fullBox("chpl", version: 1, flags: 0) { chpl in
                chpl.write(UInt32(0))
                chpl.write(UInt8(1))
                chpl.write(UInt64(0))
                chpl.write(UInt8(5))
                chpl.write(bytes: Array("Intro".utf8))
            }
        }
    }

    static let keysMetadata: [UInt8] = box("meta") { meta in
        meta.write(UInt32(0))
        HandlerBox(handlerType: "mdta", name: "").write(to: &meta)
        meta.fullBox("keys", version: 0, flags: 0) { keys in
            keys.write(UInt32(1))
            let key = Array("com.apple.quicktime.make".utf8)
            keys.write(UInt32(8 + key.count))
            keys.write(FourCC("mdta"))
            keys.write(bytes: key)
        }
        meta.box("ilst") { ilst in
            ilst.write(bytes: dataItem(FourCC(rawValue: 1), dataType: 1, Array("Apple".utf8)))
        }
    }

    static let trackName: [UInt8] = box("udta") { udta in
        udta.box("name") { $0.write(bytes: Array("Narration".utf8)) }
    }

    func extract(_ synthetic: SyntheticMovie, keepMetadata: Bool = true) throws -> Movie {
        let input = directory.write("in-\(UUID().uuidString).mp4", synthetic.build())
        let output = directory.file("out-\(UUID().uuidString).m4a")
        _ = try AudioExtractor.extract(from: input, to: output, options: ExtractionOptions(keepMetadata: keepMetadata))
        return try Movie(reading: MemoryByteSource(readFile(output)))
    }

    func richMovie() -> SyntheticMovie {
        var synthetic = SyntheticMovie()
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 100, mediaTime: 2112)])
        synthetic.extraMovieBoxes = [Self.richUserData(), Self.keysMetadata]
        synthetic.extraTrackBoxes = [Self.trackName]
        return synthetic
    }

    func testItemsCoverArtKeysAndTrackNameAreCopiedByteForByte() throws {
        let output = try extract(richMovie())
        let userData = try XCTUnwrap(output.userData)
        // Every input item is there unchanged, in order, and the gapless item follows.
        let input = Self.richUserData()
        let inputItems = items(input)
        let outputItems = items(userData)
        XCTAssertEqual(Array(outputItems.prefix(inputItems.count)), inputItems)
        XCTAssertEqual(outputItems.count, inputItems.count + 1)
        XCTAssertEqual(output.metadata, Self.keysMetadata)
        XCTAssertEqual(output.tracks[0].userData, Self.trackName)
        XCTAssertTrue(containsBytes(userData, Array("chpl".utf8)), "Nero chapters kept")
    }

    func testGaplessItemFollowsTheEditList() throws {
        let output = try extract(richMovie())
        let text = try XCTUnwrap(gaplessText(try XCTUnwrap(output.userData)))
        // Priming 2112 (0x840); 10 samples × 1024 = 10240 ticks; presented: 100 ms at
        // 44.1 kHz = 4410 (0x113A); padding 10240 - 2112 - 4410 = 3718 (0xE86).
        XCTAssertEqual(text, " 00000000 00000840 00000E86 000000000000113A" + String(repeating: " 00000000", count: 8))
    }

    func testExistingGaplessItemIsKeptAndNotDuplicated() throws {
        var synthetic = richMovie()
        let existing = freeform(name: "iTunSMPB", text: " 00000000 00000840 00000000 0000000000000001")
        synthetic.extraMovieBoxes = [Self.richUserData(extraItems: [existing])]
        let output = try extract(synthetic)
        XCTAssertEqual(output.userData, Self.richUserData(extraItems: [existing]), "udta untouched")
    }

    func testNoGaplessItemWithoutPriming() throws {
        var synthetic = SyntheticMovie()
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 100, mediaTime: 0)])
        XCTAssertNil(try extract(synthetic).userData)
    }

    func testGaplessItemCreatesUserDataWhenTheInputHasNone() throws {
        let output = try extract(SyntheticMovie())  // priming 1024, no udta
        XCTAssertNotNil(gaplessText(try XCTUnwrap(output.userData)))
    }

    func testNoMetadataDropsEverythingButPlayback() throws {
        let output = try extract(richMovie(), keepMetadata: false)
        XCTAssertNil(output.userData)
        XCTAssertNil(output.metadata)
        XCTAssertNil(output.tracks[0].userData)
        XCTAssertEqual(output.tracks[0].editList?.entries.first?.mediaTime, 2112, "the edit list still plays gapless")
    }

    func testProbeListsMetadataItems() throws {
        let input = directory.write("tags.mp4", richMovie().build())
        let items = try AudioExtractor.probe(input).metadata
        // udta/meta/ilst items, then moov/meta's keys-based ones by key name.
        XCTAssertEqual(items.map(\.key), ["\u{A9}nam", "\u{A9}ART", "trkn", "covr", "covr",
                                          "com.apple.quicktime.make"])
        XCTAssertEqual(items[0].text, "A title")
        XCTAssertEqual(items[3].valueSize, 304)
        XCTAssertNil(items[3].text)
        let output = directory.file("tags.m4a")
        _ = try AudioExtractor.extract(from: input, to: output)
        let copied = try AudioExtractor.probe(output).metadata
        XCTAssertEqual(Array(copied.prefix(5)), Array(items.prefix(5)))
        XCTAssertEqual(copied[5].key, "----:com.apple.iTunes:iTunSMPB")
        XCTAssertEqual(copied.last, items.last)
    }

    func testProbeListsNeroChapters() throws {
        let input = directory.write("chapters.mp4", richMovie().build())
        XCTAssertEqual(try AudioExtractor.probe(input).chapters, [Chapter(title: "Intro", start: 0)])
        XCTAssertEqual(try AudioExtractor.probe(directory.write("plain.mp4", SyntheticMovie().build())).chapters, [])
    }

    // MARK: Helpers reading the output independently of the code under test

    func items(_ userData: [UInt8]) -> [[UInt8]] {
        // udta(8) › meta(8 + 4) › hdlr, ilst › items
        var result: [[UInt8]] = []
        var udta = ByteReader(userData)
        guard let (_, udtaBody) = try? udta.readBox(depth: 1) else { return [] }
        var children = udtaBody
        while let (child, body) = try? children.readBox(depth: 2) {
            guard child.type == "meta" else { continue }
            var meta = body
            try? meta.skip(4)
            while let (box, boxBody) = try? meta.readBox(depth: 3) {
                guard box.type == "ilst" else { continue }
                var list = boxBody
                while let (item, _) = try? list.readBox(depth: 4) { result.append(list.bytes(of: item)) }
            }
        }
        return result
    }

    func freeform(name: String, text: String) -> [UInt8] {
        Self.box("----") { item in
            item.fullBox("mean", version: 0, flags: 0) { $0.write(bytes: Array("com.apple.iTunes".utf8)) }
            item.fullBox("name", version: 0, flags: 0) { $0.write(bytes: Array(name.utf8)) }
            item.fullBox("data", version: 0, flags: 1) { data in
                data.write(UInt32(0))
                data.write(bytes: Array(text.utf8))
            }
        }
    }

    func gaplessText(_ userData: [UInt8]) -> String? {
        for item in items(userData) where containsBytes(item, Array("iTunSMPB".utf8)) {
            guard let data = firstIndex(of: Array("data".utf8), in: item) else { return nil }
            return String(decoding: item[(data + 12)...], as: UTF8.self)
        }
        return nil
    }

    func containsBytes(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { firstIndex(of: needle, in: haystack) != nil }

    func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
