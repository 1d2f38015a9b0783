import Foundation
import TestSupport
import XCTest

/// `tag --chapters-from` writes both chapter forms: a QuickTime chapter track (which
/// ffprobe -show_chapters reads) and Nero's `udta/chpl` (which mutagen reads). Our probe,
/// ffprobe and mutagen must list the same starts and titles, the packets must not change,
/// and GStreamer must still read the file.
final class TagChapterTests: XCTestCase {
    // Its assertions read results with these oracles: without one, every test here skips.
    override func setUpWithError() throws {
        try requireOracles(["ffprobe", "gst-launch-1.0", "mutagen"])
    }

    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// `start,title` lines, the start in milliseconds.
    static func line(_ start: Double, _ title: String) -> String {
        String(format: "%.3f", start) + "," + title
    }

    /// The chapters ffprobe reads: from the QuickTime chapter track when there is one (it
    /// prefers it to chpl; `Referenced QT chapter track not found` on stderr would mean
    /// it fell back).
    func ffprobeChapters(_ path: String) throws -> [String] {
        let run = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "", "ffprobe complained: the chapter track is not read")
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let chapters = object?["chapters"] as? [[String: Any]] ?? []
        return chapters.map { chapter in
            let start = Double(chapter["start_time"] as? String ?? "") ?? -1
            let title = (chapter["tags"] as? [String: String])?["title"] ?? ""
            return Self.line(start, title)
        }
    }

    /// The Nero chapters as mutagen reads them, with its start error undone.
    ///
    /// mutagen 1.46 (`mutagen/mp4/__init__.py`, `Chapters._parse_chpl`) divides the 100 ns
    /// units of `chpl` by 10,000 and then by the movie timescale (`mvhd`), which is right
    /// only for a timescale of 1000; FFmpeg reads them as 100 ns. So the start it gives is
    /// multiplied back by its own timescale over 1000 — exactly that error, nothing else.
    func mutagenChapters(_ path: String) throws -> [String] {
        let script = """
            import sys
            from mutagen.mp4 import MP4
            chapters = MP4(sys.argv[1]).chapters
            for c in chapters or []:
                print('%.3f,%s' % (c.start * chapters._timescale / 1000, c.title))
            """
        let run = try runTool("python3", ["-c", script, path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// Our probe's chapters (`probe --json`).
    func probeChapters(_ path: String) throws -> [String] {
        let run = try runCLI(["probe", "--json", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let chapters = object?["chapters"] as? [[String: Any]] ?? []
        return chapters.map { Self.line($0["start"] as? Double ?? -1, $0["title"] as? String ?? "") }
    }

    /// Each audio, video and subtitle stream's packets (``mediaPackets(_:)``).
    func packets(_ path: String) throws -> [String] {
        try mediaPackets(path)
    }

    func gstreamerReads(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try runTool("gst-launch-1.0", ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "!", "fakesink"])
        XCTAssertEqual(run.status, 0, "GStreamer: \(run.stderr)", file: file, line: line)
    }

    /// A 12-second AAC file with a movie timescale of 600 (FFmpeg's encoder), for lists
    /// that need time, and for mutagen's timescale error.
    func longFile(_ name: String) throws -> String {
        let path = directory.file(name)
        let run = try runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=12",
                                         "-c:a", "aac", "-movie_timescale", "600", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    /// Tags `path` with `text` as its chapter list and checks that the three readers agree
    /// on `expected`, that the packets did not change and that GStreamer reads the file.
    func check(_ path: String, _ text: String, expected: [String], nero: Bool = true,
               file: StaticString = #filePath, line: UInt = #line) throws {
        let list = directory.write(URL(fileURLWithPath: path).lastPathComponent + ".chapters", Array(text.utf8))
        let before = try packets(path)
        let run = try runCLI(["tag", "--chapters-from", list, path])
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        XCTAssertEqual(try ffprobeChapters(path), expected, "ffprobe (the chapter track)", file: file, line: line)
        XCTAssertEqual(try mutagenChapters(path), nero ? expected : [], "mutagen (chpl)", file: file, line: line)
        XCTAssertEqual(try probeChapters(path), expected, "probe", file: file, line: line)
        XCTAssertEqual(try packets(path), before, "packets", file: file, line: line)
        try gstreamerReads(path, file: file, line: line)
    }

    func testBothFormsReadAlikeInEveryKindOfFile() throws {
        let text = "00:00:00.000 Intro\n# a comment\n\n00:00:00.500 Middle, part ✓\n0:01.250 End\n"
        let expected = ["0.000,Intro", "0.500,Middle, part ✓", "1.250,End"]
        for name in ["meta-itunes.m4a", "aac-h264-faststart.mp4", "frag-keyframe.mp4", "frag-gstreamer.mp4", "frag-dash.mp4",
                     "aac-h264-moov-end.mp4"] {
            let path = directory.write(name, readFile(fixture(name)))
            try check(path, text, expected: expected)
            // A second edit goes in place (padding left by the first): still both forms.
            let again = try runCLI(["tag", "--set", "title=again", path])
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertEqual(try ffprobeChapters(path), expected, name)
            XCTAssertEqual(try mutagenChapters(path), expected, name)
        }
        // FFmpeg's metadata file, into an audiobook: Apple's brand M4B is kept.
        let book = directory.file("book.m4b")
        let made = try runTool("ffmpeg", ["-v", "error", "-i", fixture("meta-itunes.m4a"), "-map", "0:a", "-c", "copy",
                                          "-brand", "M4B ", "-f", "mp4", book])
        XCTAssertEqual(made.status, 0, made.stderr)
        try check(book, ";FFMETADATA1\ntitle=whole\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=Intro\n"
                  + "[CHAPTER]\nTIMEBASE=1/10\nSTART=5\nEND=12\ntitle=Middle, part ✓\n"
                  + "[CHAPTER]\nTIMEBASE=1/1000\nSTART=1250\nEND=2000\ntitle=End\n", expected: expected)
        let brand = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0",
                                            book])
        XCTAssertEqual(brand.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "M4B")
    }

    /// Gapless by iTunSMPB alone (the fixture's edit list renamed `free`): FFmpeg 5.1 gives
    /// that priming to the last stream created before it reads `ilst`, so a chapter `trak`
    /// between the audio and `udta` took the audio's "Skip Samples" away (as it did on two
    /// corpus files); the packets, side data included, must not change.
    func testPrimingFromITunSMPBStaysWithTheAudio() throws {
        var bytes = readFile(fixture("meta-gapless-itunsmpb.m4a"))
        let edts = Array("edts".utf8)
        let at = try XCTUnwrap((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == edts })
        bytes.replaceSubrange(at..<(at + 4), with: Array("free".utf8))
        let path = directory.write("itunsmpb-only.m4a", bytes)
        XCTAssertTrue(try packets(path).contains { $0.contains("Skip Samples,1024") }, "FFmpeg reads the priming")
        try check(path, "00:00:00.000 Intro\n00:00:01.000 Second\n", expected: ["0.000,Intro", "1.000,Second"])
    }

    func testAFirstChapterThatStartsLate() throws {
        // An empty edit places the first sample; a movie timescale of 600 exercises both the
        // edit's rescaling and mutagen's timescale error.
        let path = try longFile("late.m4a")
        try check(path, "00:00:05.000 Five\n00:00:07.250 Later\n", expected: ["5.000,Five", "7.250,Later"])
    }

    func testMoreThan255ChaptersOnlyInTheChapterTrackWithAWarning() throws {
        let path = try longFile("many.m4a")
        let chapters = (0..<300).map { Chapter(n: $0) }
        try check(path, chapters.map(\.line).joined(), expected: chapters.map(\.expected), nero: false)
        let chpl = try runTool("python3", ["-c", "import sys\nfrom mutagen.mp4 import MP4\n"
                                           + "print(MP4(sys.argv[1]).chapters is None)", path])
        XCTAssertEqual(chpl.stdout, "True\n", "no chpl box: mutagen finds no chapters at all")
        // The warning, once, on stderr and in --json.
        let list = directory.write("again.txt", Array(chapters.map(\.line).joined().utf8))
        let run = try runCLI(["tag", "--json", "--chapters-from", list, path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr.components(separatedBy: "chpl holds at most 255").count - 1, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains("chpl holds at most 255"), run.stdout)
    }

    struct Chapter {
        var n: Int
        var line: String { "0:\(n / 30).\(String(format: "%03d", n % 30 * 30)) Chapter \(n)\n" }
        var expected: String { String(format: "%.3f", Double(n / 30) + Double(n % 30 * 30) / 1000) + ",Chapter \(n)" }
    }

    func testRefusalsLeaveTheFileUntouched() throws {
        let path = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        let sha = try runTool("sha256sum", [path]).stdout
        let bad = directory.write("bad.txt", Array("1:00 fine\nnot a time\n".utf8))
        let run = try runCLI(["tag", "--chapters-from", bad, path])
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("line 2"), run.stderr)
        let many = directory.write("many.txt", Array((0..<4097).map { _ in "0:00.000 Chapter\n" }.joined().utf8))
        let tooMany = try runCLI(["tag", "--chapters-from", many, path])
        XCTAssertEqual(tooMany.status, 64, tooMany.stderr)
        XCTAssertTrue(tooMany.stderr.contains("4097 chapters"), tooMany.stderr)
        let late = directory.write("late.txt", Array("0:00 One\n0:09 After the end\n".utf8))
        XCTAssertEqual(try runCLI(["tag", "--chapters-from", late, path]).status, 64, "the file lasts 2 s")
        XCTAssertEqual(try runTool("sha256sum", [path]).stdout, sha)
    }

    /// The same chapters again write nothing (issue 30: the second edit reported `in place`
    /// and changed the file's bytes); different ones are written.
    func testTheSameChaptersAgainAreNoChange() throws {
        let path = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        let list = directory.write("list.txt", Array("00:00:00.000 A\n00:00:01.000 B\n".utf8))
        XCTAssertEqual(try runCLI(["tag", "--chapters-from", list, path]).status, 0)
        let sha = try runTool("sha256sum", [path]).stdout
        let again = try runCLI(["tag", "--json", "--chapters-from", list, path])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("\"written\": \"none\""), again.stdout)
        XCTAssertEqual(try runTool("sha256sum", [path]).stdout, sha)
        let other = directory.write("other.txt", Array("00:00:00.000 A\n00:00:01.500 B\n".utf8))
        let changed = try runCLI(["tag", "--json", "--chapters-from", other, path])
        XCTAssertTrue(changed.stdout.contains("\"written\": \"in_place\""), changed.stdout)
        XCTAssertEqual(try ffprobeChapters(path), ["0.000,A", "1.500,B"])
    }

    func testAnExistingChapterTrackIsReplacedAndRemoved() throws {
        for name in ["meta-chapters-both.mp4", "mp4-subtitle-chapters.mp4"] {
            let path = directory.write(name, readFile(fixture(name)))
            let old = try ffprobeChapters(path)
            XCTAssertFalse(old.isEmpty, "\(name) has a chapter track to begin with")
            try check(path, "00:00:00.000 New one\n00:00:01.500 New two\n", expected: ["0.000,New one", "1.500,New two"])
            // One chapter track: the old one was dropped, not left beside the new one.
            let streams = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0",
                                                  path]).stdout
            XCTAssertEqual(streams.split(separator: "\n").filter { $0 == "data" }.count, 1, name)
            let before = try packets(path)
            let removed = try runCLI(["tag", "--remove-chapters", path])
            XCTAssertEqual(removed.status, 0, removed.stderr)
            XCTAssertEqual(try ffprobeChapters(path), [], name)
            XCTAssertEqual(try mutagenChapters(path), [], name)
            XCTAssertEqual(try probeChapters(path), [], name)
            XCTAssertEqual(try packets(path), before, name)
            try gstreamerReads(path)
        }
    }

    func testExtractionRemuxAndMuxTakeChapters() throws {
        let list = directory.write("list.txt", Array("00:00:00.000 A\n00:00:00.750 B\n".utf8))
        let expected = ["0.000,A", "0.750,B"]
        let outputs: [(String, [String])] = [
            ("extracted.m4a", ["--chapters-from", list, fixture("meta-chapters-both.mp4")]),
            ("remuxed.mp4", ["remux", "--chapters-from", list, fixture("mp4-subtitle-chapters.mp4")]),
            ("muxed.mp4", ["mux", fixture("aac-h264-faststart.mp4"), "--audio", fixture("meta-itunes.m4a"),
                           "--chapters-from", list]),
        ]
        for (name, arguments) in outputs {
            let output = directory.file(name)
            let run = try runCLI(arguments + [output])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try ffprobeChapters(output), expected, name)
            XCTAssertEqual(try mutagenChapters(output), expected, name)
            XCTAssertEqual(try probeChapters(output), expected, name)
            try gstreamerReads(output)
        }
        // --split-chapters cuts at the input's chapters: a list of other chapters is a mistake.
        let split = try runCLI(["--split-chapters", "--output-dir", directory.file("parts"), "--chapters-from", list,
                                fixture("meta-chapters-both.mp4")])
        XCTAssertEqual(split.status, 64, split.stderr)
        // remux --no-metadata drops the input's tags and chapters, then sets what it is told.
        let output = directory.file("bare.mp4")
        let run = try runCLI(["remux", "--no-metadata", "--set", "title=Bare", fixture("meta-chapters-both.mp4"),
                              output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try ffprobeChapters(output), [])
        let tags = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", output]).stdout
        let object = try JSONSerialization.jsonObject(with: Data(tags.utf8)) as? [String: [String: [String: String]]]
        let format = object?["format"]?["tags"] ?? [:]
        XCTAssertEqual(format["title"], "Bare")
        XCTAssertNil(format["artist"], "\(format)")
    }

    /// A fragmented file whose chapter track has its samples in fragments: changing or
    /// removing the chapters drops that track's `trak` but its `traf`s stay in the `moof`s,
    /// so its `trex` must stay too — FFmpeg refuses a `traf` without one ("could not find
    /// corresponding trex") and then the whole file; with it, FFmpeg skips the `traf`.
    func testChangingChaptersInAFragmentedFileKeepsItReadable() throws {
        let list = directory.write("list.txt", Array("00:00:00.000 A\n00:00:01.000 B\n".utf8))
        let fragmented = directory.file("frag.mp4")
        let made = try runCLI(["remux", "--fragment", "1", "--chapters-from", list, fixture("aac-h264-faststart.mp4"),
                               fragmented])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(try ffprobeChapters(fragmented), ["0.000,A", "1.000,B"])
        let before = try packets(fragmented)
        XCTAssertFalse(before.isEmpty)
        XCTAssertFalse(before.contains { $0.hasPrefix("ffprobe failed") }, "\(before)")
        let changed = directory.write("changed.mp4", readFile(fragmented))
        let l2 = directory.write("l2.txt", Array("00:00:00.000 New one\n00:00:00.500 New two\n".utf8))
        let run = try runCLI(["tag", "--chapters-from", l2, changed])
        XCTAssertEqual(run.status, 0, run.stderr)
        let opened = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", changed])
        XCTAssertEqual(opened.status, 0, "ffprobe cannot open the file: \(opened.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(opened.stdout.utf8)) as? [String: Any]
        let titles = (object?["chapters"] as? [[String: Any]] ?? []).map {
            (($0["tags"] as? [String: String])?["title"] ?? "") + "@" + ($0["start_time"] as? String ?? "")
        }
        XCTAssertEqual(titles, ["New one@0.000000", "New two@0.500000"])
        XCTAssertEqual(try packets(changed), before, "packets")
        let removed = directory.write("removed.mp4", readFile(fragmented))
        let remove = try runCLI(["tag", "--remove-chapters", removed])
        XCTAssertEqual(remove.status, 0, remove.stderr)
        let bare = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", removed])
        XCTAssertEqual(bare.status, 0, "ffprobe cannot open the file: \(bare.stderr)")
        XCTAssertFalse(bare.stdout.contains("start_time"), bare.stdout)
        XCTAssertEqual(try packets(removed), before, "packets")
        // Chapters again: a new track, whose ID is not the old one's (its trafs are still there).
        let again = try runCLI(["tag", "--chapters-from", l2, removed])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try runTool("ffprobe", ["-v", "error", "-show_chapters", removed]).status, 0)
        XCTAssertEqual(try packets(removed), before, "packets")
    }

    /// Chapter images (a JPEG video track Auphonic and Hindenburg name in tref/chap beside
    /// the text track) stay chapter images when the chapters change: the new text track is
    /// named first in tref/chap and the image track's ID kept, else FFmpeg shows the images
    /// as an ordinary video stream (attached_pic 0).
    func testChapterImagesStayNamedWhenTheChaptersChange() throws {
        let corpus = ProcessInfo.processInfo.environment["MP4_CORPUS"] ?? "/work/shared/corpus"
        for name in ["ap_auphonic_chapters_images_urls.m4a", "ap_hindenburg_chapters.m4a"] {
            let source = corpus + "/" + name
            guard FileManager.default.fileExists(atPath: source) else {
                throw XCTSkip("the corpus (\(corpus)) is missing \(name)")
            }
            let path = directory.write(name, readFile(source))
            func videoStreams(_ path: String) throws -> [String] {
                let run = try runTool("ffprobe", ["-v", "error", "-show_entries",
                                                  "stream=codec_name,codec_type:stream_disposition=attached_pic",
                                                  "-of", "csv=p=0", path])
                XCTAssertEqual(run.status, 0, run.stderr)
                return run.stdout.split(separator: "\n").map(String.init).filter { $0.contains(",video") }
            }
            let images = try videoStreams(path)
            XCTAssertTrue(images.contains("mjpeg,video,1"), "\(name): \(images)")
            let before = try packets(path)
            let list = directory.write(name + ".txt", Array("00:00:00.000 New one\n00:00:01.000 New two\n".utf8))
            // remux (MovieWriter.addChapters) too.
            let remuxed = directory.file("remuxed-" + name)
            let remux = try runCLI(["remux", "--chapters-from", list, path, remuxed])
            XCTAssertEqual(remux.status, 0, remux.stderr)
            XCTAssertEqual(try videoStreams(remuxed), images, "remux \(name)")
            XCTAssertEqual(try ffprobeChapters(remuxed), ["0.000,New one", "1.000,New two"], name)
            let run = try runCLI(["tag", "--chapters-from", list, path])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try videoStreams(path), images, name)
            XCTAssertEqual(try ffprobeChapters(path), ["0.000,New one", "1.000,New two"], name)
            XCTAssertEqual(try packets(path), before, name)
        }
    }

    /// A trak with two tref boxes (the second one was dropped whole): both stay, less only
    /// the removed IDs. No reader we have shows a tref's hint or sync entry, so their bytes
    /// are looked for in the file; ffprobe must still open it and read the new chapters.
    func testASecondTrefIsKept() throws {
        var bytes = readFile(fixture("aac-h264-moov-end.mp4"))  // moov last: no chunk offset moves
        func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + Array(type.utf8) + payload
        }
        func child(_ type: String, from start: Int) throws -> Int {
            var at = start
            while at + 8 <= bytes.count {
                if String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self) == type { return at }
                at += try XCTUnwrap(be32(at) >= 8 ? be32(at) : nil)
            }
            return try XCTUnwrap(Int?.none, "the fixture has no \(type)")
        }
        let moov = try child("moov", from: 0)
        let trak = try child("trak", from: moov + 8)
        let tkhd = trak + 8
        let inserted = box("tref", box("hint", [0, 0, 0, 1])) + box("tref", box("sync", [0, 0, 0, 2]))
        bytes.insert(contentsOf: inserted, at: tkhd + be32(tkhd))
        for at in [moov, trak] {
            let size = UInt32(be32(at) + inserted.count)
            bytes.replaceSubrange(at..<(at + 4), with: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) })
        }
        let path = directory.write("two-tref.mp4", bytes)
        XCTAssertEqual(try runTool("ffprobe", ["-v", "error", path]).status, 0)
        let list = directory.write("two-tref.txt", Array("00:00:00.000 A\n00:00:01.000 B\n".utf8))
        let run = try runCLI(["tag", "--chapters-from", list, path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try ffprobeChapters(path), ["0.000,A", "1.000,B"])
        let written = readFile(path)
        for entry in [box("hint", [0, 0, 0, 1]), box("sync", [0, 0, 0, 2])] {
            XCTAssertTrue((0...(written.count - entry.count)).contains { Array(written[$0..<($0 + entry.count)]) == entry },
                          "\(String(decoding: entry[4..<8], as: UTF8.self)) entry kept")
        }
    }
}
