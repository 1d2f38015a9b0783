@testable import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// What Scripts/tag-conformance.py found over the fixtures and the corpus, each kept fixed:
/// judged by ffprobe and mutagen, not by our parser.
final class TagConformanceTests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffprobe", "mutagen"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func packets(_ path: String) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", "-show_entries",
                                "packet=stream_index,pts,dts,duration,flags,data_hash", "-of", "csv=p=0", path]).stdout
    }

    func ffprobeTitle(_ path: String) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", path])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Fewer than 8 bytes after the last box (an iPhone's `sio_iphone_ios9.mov` has 2) are
    /// trailing garbage, which players ignore: the file is edited and they are kept.
    func testTrailingBytesAfterTheLastBoxAreKept() throws {
        let original = readFile(fixture("layout-trailing-garbage.mp4"))
        let path = directory.write("trailing.mp4", original)
        let before = try packets(path)
        let result = try TagFile.edit(path) { $0.set(.text(["Trailing"]), for: .code("©nam")) }
        XCTAssertEqual(result.method, .rewrite)
        let edited = readFile(path)
        XCTAssertEqual(Array(edited.suffix(7)), Array(original.suffix(7)), "the 7 trailing bytes, kept last")
        XCTAssertEqual(try packets(path), before)
        XCTAssertEqual(try ffprobeTitle(path), "Trailing")
        // The second edit goes in place and keeps them too.
        let second = try TagFile.edit(path) { $0.set(.text(["Again"]), for: .code("©nam")) }
        XCTAssertEqual(second.method, .inPlace)
        XCTAssertEqual(Array(readFile(path).suffix(7)), Array(original.suffix(7)))
        XCTAssertEqual(try ffprobeTitle(path), "Again")
    }
}

extension TagConformanceTests {
    /// A box inside `stbl` that runs past its parent, or is smaller than its header, is damage
    /// (65, as the README's exit statuses say), not an unsupported file (69); the file is left
    /// as it was.
    func testDamagedSampleTableIsDamageNotUnsupported() throws {
        for name in ["corrupt/box-past-parent.mp4", "corrupt/box-size-too-small.mp4"] {
            let original = readFile(fixture(name))
            let path = directory.write(name.replacingOccurrences(of: "/", with: "-"), original)
            XCTAssertThrowsError(try TagFile.edit(path) { $0.set(.text(["x"]), for: .code("©nam")) }) { error in
                XCTAssertEqual((error as? RemuxError)?.code, .invalidInput, "\(name): \(error)")
            }
            XCTAssertTrue(readFile(path) == original, "\(name) changed")
        }
    }
}

extension TagConformanceTests {
    func mutagenKeys(_ path: String) throws -> [String] {
        let run = try runTool("python3", ["-c", """
            import sys
            from mutagen.mp4 import MP4
            print("\\n".join(sorted((MP4(sys.argv[1]).tags or {}).keys())))
            """, path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// `--remove-all` keeps iTunSMPB (gapless playback information, not a tag the user sees);
    /// `--remove ----:com.apple.iTunes:iTunSMPB` still removes it.
    func testRemoveAllKeepsTheGaplessInformation() throws {
        let path = directory.write("gapless.m4a", readFile(fixture("meta-gapless-itunsmpb.m4a")))
        let smpb = "----:com.apple.iTunes:iTunSMPB"
        XCTAssertTrue(try mutagenKeys(path).contains(smpb))
        var all = TagChanges()
        all.removingAll = true
        try TagFile.edit(path, applying: all)
        XCTAssertEqual(try mutagenKeys(path), [smpb])
        var one = TagChanges()
        one.removals = [try TagKey.parse(smpb)]
        try TagFile.edit(path, applying: one)
        XCTAssertEqual(try mutagenKeys(path), [])
    }
}

extension TagConformanceTests {
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes[at..<(at + 4)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes[at..<(at + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A `saio` in `stbl` holds absolute file offsets (ISO/IEC 14496-12 § 8.7.9): moved with
    /// the chunk offsets when past the threshold, in both versions, with or without
    /// aux_info_type; one before the threshold stays. A `saio` in a `traf` is relative to
    /// its fragment's base and is left alone.
    func testSampleAuxiliaryOffsetsInStblMoveWithTheChunks() throws {
        var w = BoxWriter()
        w.box("moov") { moov in
            moov.box("trak") { trak in
                trak.box("mdia") { mdia in
                    mdia.box("minf") { minf in
                        minf.box("stbl") { stbl in
                            stbl.fullBox("stco", version: 0, flags: 0) { $0.write(UInt32(1)); $0.write(UInt32(1000)) }
                            stbl.fullBox("saio", version: 0, flags: 0) {
                                $0.write(UInt32(2)); $0.write(UInt32(1010)); $0.write(UInt32(100))
                            }
                            stbl.fullBox("saio", version: 1, flags: 1) {
                                $0.write(FourCC("cenc")); $0.write(UInt32(0)); $0.write(UInt32(1)); $0.write(UInt64(1020))
                            }
                        }
                    }
                }
            }
        }
        let moov = w.bytes
        let shifted = try TagRewritePlan.shiftingChunkOffsets(moov, by: 4096, threshold: 500)
        // moov, trak, mdia, minf, stbl headers: 40 bytes; stco is 20, then the saio boxes.
        XCTAssertEqual(Self.u32(shifted, 40 + 16), 1000 + 4096, "stco")
        XCTAssertEqual(Self.u32(shifted, 60 + 16), 1010 + 4096, "saio v0, past the threshold")
        XCTAssertEqual(Self.u32(shifted, 60 + 20), 100, "saio v0, before the threshold")
        XCTAssertEqual(Self.u64(shifted, 84 + 24), 1020 + 4096, "saio v1 with aux_info_type")
        XCTAssertEqual(shifted.count, moov.count)

        var f = BoxWriter()
        f.box("moof") { moof in
            moof.box("traf") { traf in
                traf.fullBox("saio", version: 0, flags: 0) { $0.write(UInt32(1)); $0.write(UInt32(1010)) }
            }
        }
        XCTAssertEqual(try TagRewritePlan.shiftedFragmentBox(f.bytes, by: 4096, threshold: 500), f.bytes,
                       "a traf's saio is relative to its fragment")
    }
}

extension TagConformanceTests {
    /// An item whose size runs past its `ilst` hides where the items after it start: the tags
    /// are read up to it with a warning, but a write, which would drop the items after it, is
    /// refused as damage (65) and the file left as it was. (An item damaged inside, its size
    /// intact, is skipped with a warning and the rest kept: TagCommandTests.)
    func testAnItemRunningPastItsIlstRefusesWritesAndKeepsTheFile() throws {
        var bytes = readFile(fixture("meta-itunes.m4a"))
        let artist: [UInt8] = [0xA9, 0x41, 0x52, 0x54]  // ©ART, the second item.
        guard let at = (0..<(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == artist }) else {
            return XCTFail("no ©ART item in the fixture")
        }
        bytes.replaceSubrange((at - 4)..<at, with: [0x00, 0x7F, 0xFF, 0xFF])
        let path = directory.write("past-ilst.m4a", bytes)
        let read = try TagFile.read(path)
        XCTAssertEqual(read.items.count, 1, "the title, read before the damaged item")
        XCTAssertFalse(read.warnings.isEmpty)
        XCTAssertThrowsError(try TagFile.edit(path) { $0.set(.text(["x"]), for: .code("©nam")) }) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .invalidInput, "\(error)")
        }
        XCTAssertTrue(readFile(path) == bytes, "the refused file changed")
    }
}

extension TagConformanceTests {
    /// Found by fuzz-tags: a child of `moov` whose size is 0 ("to the end of its parent") was
    /// copied as it was and the new `udta` written after it, inside what that child claims;
    /// FFmpeg and we read it as part of that box, so the tags written were nowhere. The
    /// child is now written with its size.
    func testTagsWrittenAfterASizeZeroChildOfMoovAreRead() throws {
        var bytes = readFile(fixture("aac-h264-moov-end.mp4"))
        var reader = ByteReader(bytes)
        var moov: BoxHeader?
        while moov == nil, let (box, _) = try reader.readBox(depth: 1) {
            if box.type == "moov" { moov = box }
        }
        guard let moov, moov.end == UInt64(bytes.count) else { return XCTFail("the fixture's moov is not last") }
        // Without its udta (so that the new one goes at the end), and a size-0 box last.
        let path = directory.write("size-zero-child.mp4", try Self.replacingUserData(of: bytes, moov: moov, with: nil,
                                                                                    then: Self.sizeZeroBox))
        try checkTitleIsRead(path)
    }

    static let sizeZeroBox: [UInt8] = [0, 0, 0, 0] + Array("junk".utf8) + [1, 2, 3, 4]

    /// The file (its moov last) with moov's udta replaced by `userData` (none for nil) and
    /// `then` after moov's other children.
    static func replacingUserData(of file: [UInt8], moov: BoxHeader, with userData: [UInt8]?,
                                  then extra: [UInt8] = []) throws -> [UInt8] {
        var bytes = file
        var children = ByteReader(Array(bytes[Int(moov.offset + 8)...]), fileOffset: moov.offset + 8)
        var kept: [UInt8] = []
        while let (child, _) = try children.readBox(depth: 2) {
            if child.type != "udta" { kept += children.bytes(of: child) }
        }
        kept += (userData ?? []) + extra
        bytes.replaceSubrange(Int(moov.offset + 8)..., with: kept)
        let size = UInt32(8 + kept.count)
        bytes.replaceSubrange(Int(moov.offset)..<Int(moov.offset + 4),
                              with: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) })
        return bytes
    }

    /// A title set with TagFile, read back by ffprobe and by us; the packets unchanged.
    func checkTitleIsRead(_ path: String) throws {
        let before = try packets(path)
        XCTAssertFalse(before.isEmpty)
        try TagFile.edit(path) { $0.set(.text(["After size 0"]), for: .code("©nam")) }
        XCTAssertEqual(try ffprobeTitle(path), "After size 0")
        XCTAssertEqual(try packets(path), before)
        XCTAssertEqual(try TagFile.read(path)[.code("©nam")], .text(["After size 0"]))
    }
}

extension TagConformanceTests {
    /// Found by fuzz-tags, as for moov above: a `udta` whose last child has size 0 got the new
    /// `meta` after it, inside it for every reader. Written with its size, it leaves the tags
    /// where readers find them.
    func testTagsWrittenAfterASizeZeroChildOfUdtaAreRead() throws {
        let bytes = readFile(fixture("aac-h264-moov-end.mp4"))
        var reader = ByteReader(bytes)
        var moov: BoxHeader?
        while moov == nil, let (box, _) = try reader.readBox(depth: 1) {
            if box.type == "moov" { moov = box }
        }
        guard let moov, moov.end == UInt64(bytes.count) else { return XCTFail("the fixture's moov is not last") }
        var udta = BoxWriter()
        udta.box("udta") { $0.write(bytes: Self.sizeZeroBox) }
        let path = directory.write("udta-size-zero-child.mp4", try Self.replacingUserData(of: bytes, moov: moov,
                                                                                         with: udta.bytes))
        try checkTitleIsRead(path)
    }
}

extension TagConformanceTests {
    /// Found by fuzz-tags, the same again in `ilst`: a last item of size 0 was kept as read and
    /// a new item added after it, inside it for every reader. Kept with its size, the new
    /// item is read (ffprobe lists a freeform item by its name).
    func testAnItemAddedAfterASizeZeroItemIsRead() throws {
        var bytes = readFile(fixture("meta-itunes.m4a"))
        // The fixture's last item is its freeform MY_TAG: its size field becomes 0.
        let name = Array("MY_TAG".utf8)
        guard let at = (0..<(bytes.count - name.count)).last(where: { Array(bytes[$0..<($0 + name.count)]) == name }),
              let item = (0..<at).last(where: { Array(bytes[$0..<($0 + 4)]) == Array("----".utf8) }) else {
            return XCTFail("no MY_TAG item in the fixture")
        }
        bytes.replaceSubrange((item - 4)..<item, with: [0, 0, 0, 0])
        let path = directory.write("size-zero-item.m4a", bytes)
        let before = try packets(path)
        try TagFile.edit(path) { $0.set(.text(["added"]), for: .freeform(mean: "com.apple.iTunes", name: "ADDED")) }
        let tags = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", path]).stdout
        XCTAssertTrue(tags.contains("\"ADDED\": \"added\""), tags)
        XCTAssertTrue(tags.contains("\"MY_TAG\": \"fixture freeform value\""), tags)
        XCTAssertEqual(try packets(path), before)
    }
}

extension TagConformanceTests {
    /// Found by fuzz-tags: an item written under the code `uuid` has a header every ISO reader
    /// (and ours) takes for a 16-byte extended type, which hides the items after it. `uuid`
    /// is refused as a key (64), as any other unknown one.
    func testUuidIsNotAKey() throws {
        XCTAssertNil(TagKey(parsing: "uuid"))
        XCTAssertThrowsError(try TagKey.parse("uuid"))
        XCTAssertNotNil(TagKey(parsing: "©nam"))
    }
}
