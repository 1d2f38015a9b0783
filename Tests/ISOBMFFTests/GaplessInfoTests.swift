import Foundation
import ISOBMFF
import TestSupport
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

    /// `moov/udta` holding one `iTunSMPB` item whose `data` box has type `dataType` and
    /// holds `bytes`.
    func userData(dataType: UInt32, _ bytes: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.box("udta") { udta in
            udta.fullBox("meta", version: 0, flags: 0) { meta in
                meta.box("ilst") { ilst in
                    ilst.box("----") { item in
                        item.fullBox("mean", version: 0, flags: 0) { $0.write(bytes: Array("com.apple.iTunes".utf8)) }
                        item.fullBox("name", version: 0, flags: 0) { $0.write(bytes: Array("iTunSMPB".utf8)) }
                        item.fullBox("data", version: 0, flags: dataType) { data in
                            data.write(UInt32(0))  // locale
                            data.write(bytes: bytes)
                        }
                    }
                }
            }
        }
        return w.bytes
    }

    /// The one rule of where the item applies (GaplessInfo(for:in:)): it counts samples at the
    /// codec's core rate. AAC-LC at 44.1 kHz timed at 44100: the numbers as ticks. HE-AAC
    /// (SBR: core 22050, output 44100; AudioSpecificConfig `2B 92 08 00`) timed at 44100,
    /// each 1024-sample frame lasting 2048 ticks: the numbers doubled. A track with an edit
    /// list, or timed at another rate: none.
    func testItemCountsCoreRateSamples() throws {
        func info(config: [UInt8], editList: EditListBox? = nil) throws -> GaplessInfo? {
            var synthetic = SyntheticMovie(sampleCount: 4)
            synthetic.sampleEntries = [AudioSampleEntry.isoEntry(
                format: .mp4a, channelCount: 2, sampleRate: 44100,
                children: [SyntheticMovie.esds(objectType: 0x40, config: config)])]
            synthetic.editList = editList
            synthetic.extraMovieBoxes = [userData(dataType: 1, Array(itunes.utf8))]
            let movie = try Movie(reading: MemoryByteSource(synthetic.build()))
            return GaplessInfo(for: movie.tracks[0], in: movie)
        }
        XCTAssertEqual(try info(config: [0x12, 0x10]), GaplessInfo(priming: 3622, padding: 501, validSampleCount: 0x14C6D))
        XCTAssertEqual(try info(config: [0x2B, 0x92, 0x08, 0x00]),
                       GaplessInfo(priming: 7244, padding: 1002, validSampleCount: 2 * 0x14C6D))
        XCTAssertNil(try info(config: [0x11, 0x90]))  // AAC-LC at 48 kHz in a 44100 timescale.
        XCTAssertNil(try info(config: [0x12, 0x10], editList: EditListBox(entries: [
            .init(segmentDuration: 100, mediaTime: 1024)])))
    }

    /// Issue 20, point 1: some encoders write the item with data type 0 (implicit); it was
    /// ignored, as only type 1 was read. Every type that holds text is read, as FFmpeg
    /// reads a freeform item whatever its type.
    func testItemOfEveryTextDataTypeIsRead() throws {
        let expected = GaplessInfo(priming: 3622, padding: 501, validSampleCount: 0x14C6D)
        let utf8 = Array(itunes.utf8)
        let utf16 = itunes.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for (type, bytes) in [(0, utf8), (0, utf8 + [0]), (1, utf8), (4, utf8), (2, utf16), (5, utf16)] {
            XCTAssertEqual(GaplessInfo(userData: userData(dataType: UInt32(type), bytes)), expected, "type \(type)")
        }
        // Types that do not hold text: a JPEG (13), a signed integer (21).
        XCTAssertNil(GaplessInfo(userData: userData(dataType: 13, utf8)))
        XCTAssertNil(GaplessInfo(userData: userData(dataType: 21, utf8)))
    }

    /// What each data type gives as text (QuickTime File Format, "Well-known types").
    func testValueText() {
        func text(_ type: UInt32, _ bytes: [UInt8]) -> String? {
            MetadataBox.Value(dataType: type, bytes: bytes).text
        }
        XCTAssertEqual(text(1, Array("Caf\u{E9}".utf8)), "Caf\u{E9}")
        XCTAssertEqual(text(4, Array("sort".utf8)), "sort")
        XCTAssertEqual(text(2, [0x00, 0x43, 0x00, 0xE9]), "C\u{E9}")  // Big-endian.
        XCTAssertEqual(text(5, [0xFE, 0xFF, 0x00, 0x43]), "C")  // Big-endian mark.
        XCTAssertEqual(text(2, [0xFF, 0xFE, 0x43, 0x00, 0xE9, 0x00]), "C\u{E9}")  // Little-endian mark.
        XCTAssertNil(text(2, [0x00, 0x43, 0x00]))  // Odd length.
        XCTAssertEqual(text(0, Array("Caf\u{E9}\tx\n".utf8) + [0, 0]), "Caf\u{E9}\tx\n")
        XCTAssertNil(text(0, [0x00, 0x78]))  // An integer (tmpo 120), not text.
        XCTAssertNil(text(0, [0xFF, 0xD8, 0xFF, 0xE0]))  // A JPEG's start: not UTF-8.
        XCTAssertNil(text(0, [0x41, 0x00, 0x42]))  // A NUL inside.
        XCTAssertNil(text(3, Array("sjis".utf8)))  // Shift-JIS is not decoded.
        XCTAssertNil(text(21, [0x01]))
        XCTAssertEqual(text(0, []), "")
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

/// The edit-list rule's cases from real files (issue 19, item 3).
final class TrackPresentationTests: XCTestCase {
    /// A last edit of duration 0 in a fragmented file runs to the end of the media; in a
    /// regular file it stays as stated.
    func testEditOfDurationZeroInAFragmentedFileRunsToTheEnd() {
        let list = EditListBox(entries: [.init(segmentDuration: 0, mediaTime: 1024)])
        let fragmented = TrackPresentation(editList: list, movieTimescale: 1000, mediaTimescale: 44100,
                                           mediaDuration: 45056, path: "trak", isFragmented: true)
        XCTAssertEqual(fragmented.edits, [.init(segmentDuration: 998, mediaTime: 1024)])  // 44032 ticks ≈ 998.4 ms.
        XCTAssertEqual(fragmented.priming, 1024)
        XCTAssertTrue(fragmented.isChanged)
        let regular = TrackPresentation(editList: list, movieTimescale: 1000, mediaTimescale: 44100,
                                        mediaDuration: 45056, path: "trak")
        XCTAssertEqual(regular.edits, list.entries)
    }

    /// An empty edit longer than the media delays the track by all of it, as FFmpeg plays it.
    func testEmptyEditLongerThanTheMediaIsHonoured() {
        let list = EditListBox(entries: [.init(segmentDuration: 5000, mediaTime: -1),
                                         .init(segmentDuration: 1000, mediaTime: 0)])
        let presentation = TrackPresentation(editList: list, movieTimescale: 1000, mediaTimescale: 1000,
                                             mediaDuration: 1000, path: "trak")
        XCTAssertEqual(presentation.edits, list.entries)
        XCTAssertTrue(presentation.warnings.isEmpty, "\(presentation.warnings)")
        XCTAssertEqual(presentation.seconds, 6)
    }

    /// With B-frames the media is presented until its last frame ends, after the decode
    /// times: a segment up to there is kept, not cut to the decode-time length.
    func testSegmentsAreFittedToThePresentationEnd() {
        let list = EditListBox(entries: [.init(segmentDuration: 1000, mediaTime: 100)])
        let presentation = TrackPresentation(editList: list, movieTimescale: 1000, mediaTimescale: 1000,
                                             mediaDuration: 1000, path: "trak", mediaEnd: 1100)
        XCTAssertEqual(presentation.edits, list.entries)
        XCTAssertFalse(presentation.isChanged)
    }

    /// The movie timescale: the least common multiple while FFmpeg can read it (2^31 − 1),
    /// else the largest track timescale.
    func testMovieTimescale() {
        XCTAssertEqual(movieTimescale(forTracksOf: [12800, 48000]), 192_000)
        XCTAssertEqual(movieTimescale(forTracksOf: [12800, 44100, 1000]), 28_224_000)
        XCTAssertEqual(movieTimescale(forTracksOf: [12800, 44100, 1_000_000, 1000]), 1_000_000)  // LCM 3,528,000,000.
        XCTAssertEqual(movieTimescale(forTracksOf: [0, 600]), 600)
        XCTAssertNil(movieTimescale(forTracksOf: [0]))
    }

    /// The presented time of each frame through the edit list equals ffprobe's packet time
    /// with the edit list applied (the fixture's expectation stores ffprobe's numbers without
    /// it: pts here minus the edit's media time, 1024, at 12800 Hz), and a frame the edit
    /// skips has none.
    func testPresentedTimeFollowsTheEdits() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("video-bframes.mp4"))))
        let video = reader.tracks[0]
        let samples = try reader.samples(of: video)
        let presentation = reader.presentation(of: video, samples: samples)
        let media = try XCTUnwrap(presentation.edits.first?.mediaTime)
        // ffprobe -ignore_editlist 1's pts (Scripts/packets-conformance.py --write), per sample.
        let stored = try JSONSerialization.jsonObject(with: Data(readFile(fixture(
            "expected/packets/video-bframes.mp4.json")))) as? [String: Any]
        let track = try XCTUnwrap((stored?["tracks"] as? [[String: Any]])?.first)
        let ffprobe = try XCTUnwrap(track["packets"] as? [[Int]]).map { Int64($0[1]) }
        XCTAssertEqual(ffprobe.count, samples.count)
        for (sample, pts) in zip(samples, ffprobe) {
            let seconds = presentation.presentedSeconds(ofMediaTime: sample.presentationTime,
                                                        mediaTimescale: video.timescale)
            XCTAssertEqual(try XCTUnwrap(seconds), Double(pts - media) / 12800, accuracy: 1e-9)
        }
        XCTAssertNil(presentation.presentedSeconds(ofMediaTime: media - 1, mediaTimescale: video.timescale))
        let delayed = TrackPresentation(editList: EditListBox(entries: [.init(segmentDuration: 500, mediaTime: -1),
                                                                        .init(segmentDuration: 1000, mediaTime: 0)]),
                                        movieTimescale: 1000, mediaTimescale: 1000, mediaDuration: 1000, path: "t")
        XCTAssertEqual(delayed.presentedSeconds(ofMediaTime: 0, mediaTimescale: 1000), 0.5)
        XCTAssertNil(delayed.presentedSeconds(ofMediaTime: 1000, mediaTimescale: 1000))
    }
}
