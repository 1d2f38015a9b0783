import ISOBMFF
import XCTest

/// The `iTunSMPB` numbers and their place in the one presentation rule (issue 13, point 1).
final class GaplessInfoTests: XCTestCase {
    /// The text as iTunes writes it (priming 0xE26 = 3622, padding 0x1F5 = 501).
    let itunes = " 00000000 00000E26 000001F5 0000000000014C6D 00000000 00000000 00000000 00000000 00000000"
        + " 00000000 00000000 00000000"

    func testParsesITunesText() {
        XCTAssertEqual(GaplessInfo(text: itunes), GaplessInfo(priming: 3622, padding: 501, validSampleCount: 0x14C6D))
        XCTAssertNil(GaplessInfo(text: " 00000000 00000E26"))
        XCTAssertNil(GaplessInfo(text: " 00000000 00000E26 000001F5 0000000000000000"))
        XCTAssertNil(GaplessInfo(text: " 00000000 1FFFFFFFF 000001F5 0000000000014C6D"))
        XCTAssertNil(GaplessInfo(text: " 00000000 zz 000001F5 0000000000014C6D"))
    }

    func testWithoutEditListTheItemGivesOneEdit() throws {
        let gapless = try XCTUnwrap(GaplessInfo(text: itunes))
        let media: UInt64 = 3622 + 0x14C6D + 501
        let presentation = TrackPresentation(editList: nil, movieTimescale: 44100, mediaTimescale: 44100,
                                             mediaDuration: media, path: "moov/trak", gapless: gapless)
        XCTAssertEqual(presentation.edits, [.init(segmentDuration: 0x14C6D, mediaTime: 3622)])
        XCTAssertTrue(presentation.isFromGaplessInfo)
        XCTAssertEqual(presentation.priming, 3622)
        XCTAssertEqual(presentation.seconds, Double(0x14C6D) / 44100)
        XCTAssertEqual(presentation.editList(replacing: nil)?.entries, presentation.edits)
        // A valid count past the media is fitted to it, with a warning.
        let short = TrackPresentation(editList: nil, movieTimescale: 44100, mediaTimescale: 44100,
                                      mediaDuration: 10_000, path: "moov/trak", gapless: gapless)
        XCTAssertEqual(short.edits, [.init(segmentDuration: 10_000 - 3622, mediaTime: 3622)])
        XCTAssertEqual(short.warnings.count, 1)
        // Priming past the media: the item is not used.
        let none = TrackPresentation(editList: nil, movieTimescale: 44100, mediaTimescale: 44100,
                                     mediaDuration: 3000, path: "moov/trak", gapless: gapless)
        XCTAssertEqual(none.edits, [])
        XCTAssertFalse(none.isFromGaplessInfo)
    }

    func testAnEditListWins() throws {
        let gapless = try XCTUnwrap(GaplessInfo(text: itunes))
        let list = EditListBox(entries: [.init(segmentDuration: 2000, mediaTime: 1024)])
        let presentation = TrackPresentation(editList: list, movieTimescale: 1000, mediaTimescale: 44100,
                                             mediaDuration: 100_000, path: "moov/trak", gapless: gapless)
        XCTAssertEqual(presentation.edits, list.entries)
        XCTAssertEqual(presentation.priming, 1024)
        XCTAssertFalse(presentation.isFromGaplessInfo)
    }
}
