import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// `extract-audio tag`: tags changed by a full rewrite published atomically; packets
/// identical (ffprobe CRC) before and after; every top-level box but `moov` copied byte for
/// byte; padding after `moov`; mutagen reads what we wrote; failures leave the file as it was.
final class TagCommandTests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffprobe", "mutagen"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func copy(_ name: String) -> String {
        directory.write(name, readFile(fixture(name)))
    }

    /// Each packet's stream, pts, dts, size, flags and CRC, as ffprobe reads them.
    func packets(_ path: String) throws -> String {
        let run = try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", "-show_entries",
                                          "packet=stream_index,pts,dts,size,flags,data_hash", "-of", "csv=p=0", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout
    }

    /// The top-level boxes: type and bytes.
    func topLevelBoxes(_ path: String) throws -> [(FourCC, [UInt8])] {
        let bytes = readFile(path)
        var reader = ByteReader(bytes)
        var boxes: [(FourCC, [UInt8])] = []
        while let (box, _) = try reader.readBox(depth: 1) { boxes.append((box.type, reader.bytes(of: box))) }
        return boxes
    }

    func mutagenTitle(_ path: String) throws -> String {
        let run = try runTool("python3", ["-c", "import sys; from mutagen.mp4 import MP4; "
                                          + "print(MP4(sys.argv[1]).tags['\\xa9nam'][0])", path])
        XCTAssertEqual(run.status, 0, "mutagen (python3-mutagen): \(run.stderr)")
        return run.stdout.trimmingCharacters(in: .newlines)
    }

    /// Moov first (offsets move), moov last, fragmented (tfhd base offsets, tfra), a video.
    static let files = ["meta-itunes.m4a", "aac-h264-faststart.mp4", "aac-h264-moov-end.mp4", "frag-dash.mp4",
                        "frag-cmaf.mp4", "frag-default-base-moof.mp4", "frag-gstreamer.mp4", "aac-quicktime.mov",
                        "meta-chapters-both.mp4", "meta-gapless-itunsmpb.m4a",
                        "frag-keyframe.mp4", "frag-audio-only.m4a", "frag-tfdt-start.mp4",
                        "layout-mdat-size-zero.mp4", "layout-mdat-largesize.mp4", "layout-two-mdats.mp4",
                        "layout-free-skip-wide.mp4", "aac-3gp.3gp", "codec-alac.m4a", "meta-iphone.mov"]

    func testRewriteKeepsPacketsAndEveryOtherBox() throws {
        for name in Self.files {
            let path = copy(name)
            let before = try packets(path)
            let boxesBefore = try topLevelBoxes(path)
            let run = try runCLI(["tag", "--set", "title=Nouveau titre ✓", "--set", "track=4/7", path])
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            XCTAssertEqual(try packets(path), before, "\(name): packets changed")
            XCTAssertEqual(try mutagenTitle(path), "Nouveau titre ✓", name)
            let boxes = try topLevelBoxes(path)
            let moovIndex = try XCTUnwrap(boxes.firstIndex { $0.0 == "moov" }, name)
            XCTAssertEqual(boxes[moovIndex + 1].0, "free", name)
            XCTAssertGreaterThanOrEqual(boxes[moovIndex + 1].1.count, boxes[moovIndex].1.count + 4096, name)
            // Every other box, byte for byte, in order: the old padding around moov (free/skip
            // right before and after it) is replaced; moof and mfra may only differ in their
            // moved offsets (same size).
            let others = boxes.enumerated().filter { $0.offset != moovIndex && $0.offset != moovIndex + 1 }.map(\.element)
            var old = boxesBefore
            if var oldMoov = old.firstIndex(where: { $0.0 == "moov" }) {
                old.remove(at: oldMoov)
                while oldMoov < old.count, old[oldMoov].0 == "free" || old[oldMoov].0 == "skip" { old.remove(at: oldMoov) }
                while oldMoov > 0, old[oldMoov - 1].0 == "free" || old[oldMoov - 1].0 == "skip" {
                    old.remove(at: oldMoov - 1)
                    oldMoov -= 1
                }
            }
            XCTAssertEqual(others.map(\.0), old.map(\.0), name)
            for (new, previous) in zip(others, old) {
                if new.0 == "moof" || new.0 == "mfra" {
                    XCTAssertEqual(new.1.count, previous.1.count, name)
                } else {
                    XCTAssertTrue(new.1 == previous.1, "\(name): \(new.0) changed")
                }
            }
            // A second edit fits the first's padding: written in place.
            let again = try runCLI(["tag", "--json", "--remove", "title", path])
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertTrue(again.stdout.contains("\"written\": \"in_place\""), "\(name): \(again.stdout)")
            XCTAssertEqual(readFile(path).count, boxes.reduce(0) { $0 + $1.1.count }, "in place: same size")
            XCTAssertEqual(try packets(path), before, "\(name): packets changed on the second edit")
            XCTAssertFalse(try runCLI(["tag", path]).stdout.contains("title:"), name)
        }
    }

    /// tfhd base_data_offset (checked by the packets above) and each tfra entry's moof_offset
    /// move with their boxes.
    func testRandomAccessOffsetsPointAtTheirFragments() throws {
        for name in ["frag-keyframe.mp4", "frag-audio-only.m4a"] {
            let path = copy(name)
            XCTAssertEqual(try runCLI(["tag", "--set", "title=Moved", path]).status, 0)
            let bytes = readFile(path)
            let mfra = try XCTUnwrap(try topLevelBoxes(path).first { $0.0 == "mfra" }?.1, name)
            var reader = ByteReader(mfra)
            var entries = 0
            guard let (_, payload) = try reader.readBox(depth: 1) else { return XCTFail(name) }
            var children = payload
            while let (child, body) = try children.readBox(depth: 2) {
                guard child.type == "tfra" else { continue }
                var tfra = body
                let (version, _) = try tfra.readVersionAndFlags()
                _ = try tfra.readUInt32()
                let sizes = try tfra.readUInt32()
                let count = try tfra.readUInt32()
                for _ in 0..<count {
                    let offset = version == 1 ? (try tfra.readUInt64(), try tfra.readUInt64()).1
                        : UInt64((try tfra.readUInt32(), try tfra.readUInt32()).1)
                    try tfra.skip(Int((sizes >> 4) & 3) + Int((sizes >> 2) & 3) + Int(sizes & 3) + 3)
                    XCTAssertEqual(Array(bytes[Int(offset + 4)..<Int(offset + 8)]), Array("moof".utf8), name)
                    entries += 1
                }
            }
            XCTAssertGreaterThan(entries, 0, name)
        }
    }

    func testGaplessAndUnknownItemsAreKept() throws {
        let path = copy("meta-gapless-itunsmpb.m4a")
        let before = try XCTUnwrap(ItemListReader.items(path))
        XCTAssertEqual(try runCLI(["tag", "--set", "artist=Someone", path]).status, 0)
        let after = try XCTUnwrap(ItemListReader.items(path))
        for item in before.items where item.key != .code("©ART") {
            XCTAssertTrue(after.items.contains { $0.originalBytes == item.originalBytes }, "\(item.key) changed")
        }
        let ffprobe = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=iTunSMPB", "-of", "csv=p=0",
                                              path])
        XCTAssertFalse(ffprobe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    func testJSONAndDryRun() throws {
        let path = copy("meta-itunes.m4a")
        let original = readFile(path)
        let run = try runCLI(["tag", "--dry-run", "--json", "--set", "bpm=99", "--set", "compilation=false", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(readFile(path), original, "a dry run writes nothing")
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["written"] as? String, "dry_run")
        let tags = object?["tags"] as? [[String: Any]] ?? []
        let bpm = tags.first { $0["key"] as? String == "bpm" }
        XCTAssertEqual(bpm?["code"] as? String, "tmpo")
        XCTAssertEqual(bpm?["value"] as? Int, 99)
        XCTAssertEqual(tags.first { $0["code"] as? String == "cpil" }?["value"] as? Bool, false)
        let track = tags.first { $0["key"] as? String == "track" }?["value"] as? [String: Int]
        XCTAssertEqual(track, ["number": 3, "total": 12])
    }

    func testCoversReplaceAndRemove() throws {
        let path = copy("meta-itunes.m4a")
        let jpeg = directory.write("front.jpg", readFile(fixture("images/cover.jpg")))
        let png = directory.write("back.png", readFile(fixture("images/cover.png")))
        XCTAssertEqual(try runCLI(["tag", "--cover", jpeg, "--cover", png, path]).status, 0)
        let covers = try runTool("python3", ["-c", """
            import sys, hashlib
            from mutagen.mp4 import MP4
            for c in MP4(sys.argv[1]).tags['covr']: print(c.imageformat, hashlib.sha256(bytes(c)).hexdigest())
            """, path]).stdout
        let expected = try [jpeg, png].map { String(try runTool("sha256sum", [$0]).stdout.prefix(64)) }
        XCTAssertEqual(covers, "13 \(expected[0])\n14 \(expected[1])\n")
        XCTAssertEqual(try runCLI(["tag", "--remove-cover", path]).status, 0)
        XCTAssertFalse(try runCLI(["tag", path]).stdout.contains("cover:"))
    }

    func testBadKeysValuesAndImagesExitWithoutTouchingTheFile() throws {
        let path = copy("meta-itunes.m4a")
        let original = readFile(path)
        let unknown = try runCLI(["tag", "--set", "titel=x", path])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("album_artist"), unknown.stderr)
        XCTAssertEqual(try runCLI(["tag", "--set", "track=65536", path]).status, 64)
        XCTAssertEqual(try runCLI(["tag", "--set", "compilation=perhaps", path]).status, 64)
        XCTAssertEqual(try runCLI(["tag", "--set", "cover=x", path]).status, 64)
        let gif = directory.write("cover.gif", Array("GIF89a".utf8) + [0, 0, 0])
        let notImage = try runCLI(["tag", "--cover", gif, path])
        XCTAssertEqual(notImage.status, 69)
        XCTAssertTrue(notImage.stderr.contains("neither a JPEG nor a PNG"), notImage.stderr)
        XCTAssertEqual(readFile(path), original)
    }

    func testReadOnlyFileAndFolderExit73Untouched() throws {
        let path = copy("meta-itunes.m4a")
        let original = readFile(path)
        chmod(path, 0o444)
        let run = try runCLI(["tag", "--set", "title=x", path])
        XCTAssertEqual(run.status, 73, run.stderr)
        XCTAssertEqual(readFile(path), original)
        chmod(path, 0o644)
        let folder = directory.file("locked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let inside = folder + "/song.m4a"
        FileManager.default.createFile(atPath: inside, contents: Data(original))
        chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        XCTAssertEqual(try runCLI(["tag", "--set", "title=x", inside]).status, 73)
        XCTAssertEqual(readFile(inside), original)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["song.m4a"])
    }

    /// A file we do not write into: one cut short (65), a directory (66); left as they were.
    /// (Fewer than 8 bytes after the last box are trailing garbage, kept: TagConformanceTests.)
    func testDamagedFilesAndDirectoriesAreRefused() throws {
        let truncated = copy("aac-h264-faststart-truncated.mp4")
        let original = readFile(truncated)
        XCTAssertEqual(try runCLI(["tag", "--set", "title=x", truncated]).status, 65)
        XCTAssertEqual(readFile(truncated), original)
        XCTAssertEqual(try runCLI(["tag", "--set", "title=x", directory.path]).status, 66)
        XCTAssertEqual(try runCLI(["tag", directory.path]).status, 66)
    }

    func testSeveralFilesEachJudgedAlone() throws {
        let good = copy("meta-itunes.m4a")
        let bad = directory.write("bad.m4a", Array("not an mp4 at all".utf8))
        let run = try runCLI(["tag", "--set", "title=Both", bad, directory.path, good])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertEqual(try mutagenTitle(good), "Both")
        XCTAssertEqual(readFile(bad), Array("not an mp4 at all".utf8))
    }

    /// Extraction (whole and cut), remux and mux tag their output in the same pass; with
    /// --no-metadata the input's tags go first.
    func testSetAndCoverOnExtractionRemuxAndMux() throws {
        let png = directory.write("c.png", readFile(fixture("images/cover.png")))
        let runs: [(String, [String])] = [
            ("extracted.m4a", [fixture("meta-itunes.m4a")]),
            ("cut.m4a", ["--from", "0.1", "--to", "0.5", fixture("meta-itunes.m4a")]),
            ("remuxed.mp4", ["remux", fixture("meta-itunes.m4a")]),
            ("muxed.mp4", ["mux", fixture("aac-h264-faststart.mp4"), "--audio", fixture("meta-itunes.m4a")]),
        ]
        for (name, arguments) in runs {
            for keep in [true, false] where keep || name != "remuxed.mp4" {  // remux has no --no-metadata
                let output = directory.file((keep ? "" : "bare-") + name)
                let run = try runCLI(arguments + (keep ? [] : ["--no-metadata"])
                                     + ["--set", "title=Set in one pass", "--cover", png, output])
                XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
                XCTAssertEqual(try mutagenTitle(output), "Set in one pass", name)
                let listed = try runCLI(["tag", output]).stdout
                XCTAssertTrue(listed.contains("cover: PNG image, \(readFile(png).count) bytes"), "\(name): \(listed)")
                let fixtureArtist = listed.contains("artist: Fixture Artist")
                XCTAssertEqual(fixtureArtist, keep && name != "muxed.mp4", "\(name), keep \(keep): \(listed)")
            }
        }
        XCTAssertEqual(try runCLI(["--set", "titel=x", fixture("meta-itunes.m4a"), directory.file("x.m4a")]).status, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("x.m4a")))
    }

    func testSymbolicLinkStaysALink() throws {
        let path = copy("meta-itunes.m4a")
        let link = directory.file("link.m4a")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        XCTAssertEqual(try runCLI(["tag", "--set", "title=Linked", link]).status, 0)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), path)
        XCTAssertEqual(try mutagenTitle(path), "Linked")
    }
}

/// The tags of a file through the model, for comparing items byte for byte.
enum ItemListReader {
    static func items(_ path: String) throws -> ItemList? {
        let bytes = readFile(path)
        var file = ByteReader(bytes)
        while let (box, payload) = try file.readBox(depth: 1) {
            guard box.type == "moov" else { continue }
            var children = payload
            while let (child, _) = try children.readBox(depth: 2) {
                if child.type == "udta" { return ItemList(userData: children.bytes(of: child)) }
            }
        }
        return nil
    }
}
