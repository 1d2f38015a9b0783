@testable import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The one in-place write: a new `moov` written into the padding after the old one, then
/// two 4-byte flips. Stopped after each write (and its sync), the file opens in FFmpeg,
/// GStreamer and our reader with the old tags or the new, never a mix, and its packets
/// never change.
final class TagInPlaceTests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffprobe", "gst-launch-1.0"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    static let title = TagKey.code("©nam")

    func ffprobeTitle(_ path: String) throws -> String {
        let run = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func gstreamerTitle(_ path: String) throws -> String? {
        let run = try runTool("gst-launch-1.0", ["-t", "filesrc", "location=\(path)", "!", "qtdemux", "!", "fakesink"])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        for line in run.stdout.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("title: ") { return String(trimmed.dropFirst(7)) }
        }
        return nil
    }

    func packets(_ path: String) throws -> String {
        try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", "-show_entries",
                                "packet=stream_index,pts,dts,size,data_hash", "-of", "csv=p=0", path]).stdout
    }

    /// A copy of the fixture, tagged once (a full rewrite, which leaves the padding).
    func prepared(_ name: String) throws -> String {
        let path = directory.write(name, readFile(fixture(name)))
        let first = try TagFile.edit(path) { $0.set(.text(["Old"]), for: Self.title) }
        XCTAssertEqual(first.method, .rewrite)
        return path
    }

    /// The library refuses a new cover that is not a whole image, in the closure form too,
    /// and leaves the file as it was; the covers already in a file are kept as they are.
    func testANewCoverMustBeAWholeImage() throws {
        let path = directory.write("cover.m4a", readFile(fixture("meta-itunes.m4a")))
        let before = readFile(path)
        var png = readFile(fixture("images/cover.png"))
        png[png.count - 1] ^= 0x01  // IEND's CRC.
        XCTAssertThrowsError(try TagFile.edit(path) { tags in
            tags.set(.images([TagImage(format: .png, bytes: png)]), for: .code("covr"))
        }) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .unsupportedInput)
        }
        XCTAssertEqual(readFile(path), before)
        XCTAssertNoThrow(try TagFile.edit(path) { tags in tags.set(.text(["Covers kept"]), for: .code("©nam")) })
    }

    /// Whether mutagen reads the first cover of `path` as the bytes of the file `image`.
    func mutagenCoverIs(_ path: String, _ image: String) throws -> Bool {
        let run = try runTool("python3", ["-c", "import mutagen.mp4, sys; print(bytes(mutagen.mp4.MP4(sys.argv[1])"
                                          + ".tags['covr'][0]) == open(sys.argv[2], 'rb').read())", path, image])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "True"
    }

    /// A cover the file holds (past `Layout.keptCoverSize`) is left in the file when the
    /// edit reads moov and copied from there: stopped after each write, the file has the old
    /// or the new title and the cover's bytes; a chapter edit and a rewrite keep it too.
    func testAKeptCoverIsCopiedFromTheFile() throws {
        try requireOracles(["mutagen"])
        var jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0,
                             0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0]
        jpeg += (0..<(200 << 10)).map { UInt8($0 % 250) }
        jpeg += [0xFF, 0xD9]
        let image = directory.write("cover.jpg", jpeg)
        let source = directory.write("kept.m4a", readFile(fixture("meta-itunes.m4a")))
        try TagFile.edit(source) { tags in
            tags.set(.text(["Old"]), for: Self.title)
            tags.set(.images([TagImage(format: .jpeg, bytes: jpeg)]), for: .code("covr"))
        }
        XCTAssertTrue(try mutagenCoverIs(source, image))
        for stop in 1...4 {
            let path = directory.write("kept-stop\(stop).m4a", readFile(source))
            XCTAssertThrowsError(try TagFile.edit(path, dryRun: false, stoppingAfterWrite: stop) {
                $0.set(.text(["New"]), for: Self.title)
            }) { XCTAssertTrue($0 is TagFile.InjectedStop, "\($0)") }
            XCTAssertEqual(try ffprobeTitle(path), stop < 4 ? "Old" : "New", "stopped after write \(stop)")
            XCTAssertTrue(try mutagenCoverIs(path, image), "stopped after write \(stop)")
            let next = try TagFile.edit(path) { $0.set(.text(["Next"]), for: Self.title) }
            XCTAssertEqual(try ffprobeTitle(path), "Next", "edited after a stop at \(stop)")
            XCTAssertTrue(try mutagenCoverIs(path, image), "edited after a stop at \(stop)")
            guard case .images(let images)? = next.tags[.code("covr")] else { return XCTFail("no cover") }
            XCTAssertNotNil(images.first?.streamed?.keptAt, "the cover was left in the file")
            XCTAssertEqual(images.first?.byteCount, UInt64(jpeg.count))
        }
        var changes = TagChanges()
        changes.chapters = [Chapter(title: "One", start: 0), Chapter(title: "Two", start: 0.5)]
        let path = directory.write("kept-chapters.m4a", readFile(source))
        try TagFile.edit(path, applying: changes)
        XCTAssertEqual(try AudioExtractor.probe(path).chapters.map(\.title), ["One", "Two"])
        XCTAssertTrue(try mutagenCoverIs(path, image), "after a chapter edit")
    }

    func testStopAfterEachWriteLeavesOldOrNewTags() throws {
        for name in ["meta-itunes.m4a", "aac-h264-faststart.mp4", "frag-keyframe.mp4"] {
            let source = try prepared(name)
            let expectedPackets = try packets(source)
            for stop in 1...4 {
                let path = directory.write("stop\(stop)-" + name, readFile(source))
                XCTAssertThrowsError(try TagFile.edit(path, dryRun: false, stoppingAfterWrite: stop) {
                    $0.set(.text(["New"]), for: Self.title)
                }) { XCTAssertTrue($0 is TagFile.InjectedStop, "\($0)") }
                // The old tags until the last flip, then the new ones.
                let expected = stop < 4 ? "Old" : "New"
                XCTAssertEqual(try ffprobeTitle(path), expected, "\(name), stopped after write \(stop): FFmpeg")
                XCTAssertEqual(try gstreamerTitle(path), expected, "\(name), stopped after write \(stop): GStreamer")
                XCTAssertEqual(try TagFile.read(path)[Self.title], .text([expected]), "\(name), after write \(stop)")
                let input = try InputFile(path: path)
                XCTAssertNoThrow(try MovieReader(reading: input), "\(name), after write \(stop)")
                XCTAssertEqual(try packets(path), expectedPackets, "\(name), after write \(stop)")
                XCTAssertEqual(readFile(path).count, readFile(source).count, "in place: the size never changes")
                // The next edit finds its way from the stopped state.
                XCTAssertNoThrow(try TagFile.edit(path) { $0.set(.text(["Next"]), for: Self.title) })
                XCTAssertEqual(try ffprobeTitle(path), "Next", "\(name), edited after a stop at \(stop)")
                XCTAssertEqual(try packets(path), expectedPackets, "\(name), edited after a stop at \(stop)")
            }
        }
    }

    func testInPlaceWhenThePaddingHoldsTheNewMovieBoxElseRewrite() throws {
        let path = try prepared("meta-itunes.m4a")
        let size = readFile(path).count
        let small = try TagFile.edit(path) { $0.set(.text(["Small change"]), for: Self.title) }
        XCTAssertEqual(small.method, .inPlace)
        XCTAssertEqual(readFile(path).count, size)
        XCTAssertEqual(try ffprobeTitle(path), "Small change")
        let lyrics = String(repeating: "la ", count: 20_000)
        let large = try TagFile.edit(path) { $0.set(.text([lyrics]), for: .code("©lyr")) }
        XCTAssertEqual(large.method, .rewrite, "60 kB of lyrics do not fit 4 KiB of padding")
        XCTAssertEqual(try ffprobeTitle(path), "Small change")
    }

    func ffprobeChapters(_ path: String) throws -> String {
        let run = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-show_entries",
                                          "chapter=start_time:chapter_tags=title", "-of", "csv=p=0", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "", "ffprobe found no chapter track it was pointed to")
        return run.stdout
    }

    /// A chapter change carried in place: the new moov (with its chapter track), then the
    /// chapter track's mdat at the end of the padding, both inside the free box; then the
    /// cut, and the two flips. Each stop leaves the old chapters (none) or the new ones.
    func testStopAfterEachWriteOfAChapterChange() throws {
        for name in ["meta-itunes.m4a", "aac-h264-faststart.mp4", "frag-keyframe.mp4"] {
            let source = try prepared(name)
            let expectedPackets = try mediaPackets(source)
            let chapters = [Chapter(title: "One", start: 0), Chapter(title: "Two ✓", start: 0.75)]
            for stop in 1...5 {
                let path = directory.write("chapters-stop\(stop)-" + name, readFile(source))
                XCTAssertThrowsError(try TagFile.edit(path, dryRun: false, stoppingAfterWrite: stop,
                                                      chapters: .some(chapters)) { _ in }) {
                    XCTAssertTrue($0 is TagFile.InjectedStop, "\(name), stop \(stop): \($0) (not in place?)")
                }
                let expected = stop < 5 ? "" : "0.000000,One\n0.750000,Two ✓\n"
                XCTAssertEqual(try ffprobeChapters(path), expected, "\(name), stopped after write \(stop): FFmpeg")
                XCTAssertEqual(try gstreamerTitle(path), "Old", "\(name), stopped after write \(stop): GStreamer")
                XCTAssertEqual(try AudioExtractor.probe(path).chapters.map(\.title), stop < 5 ? [] : ["One", "Two ✓"])
                XCTAssertEqual(try mediaPackets(path), expectedPackets, "\(name), after write \(stop)")
                XCTAssertEqual(readFile(path).count, readFile(source).count, "in place: the size never changes")
                // The next edit finds its way from the stopped state.
                XCTAssertNoThrow(try TagFile.edit(path) { $0.set(.text(["Next"]), for: Self.title) })
                XCTAssertEqual(try ffprobeTitle(path), "Next", "\(name), edited after a stop at \(stop)")
            }
        }
    }
}
