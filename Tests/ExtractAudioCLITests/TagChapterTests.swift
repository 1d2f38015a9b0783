import Foundation
import TestSupport
import XCTest

/// `tag --chapters-from`: Nero chapters (`udta/chpl`) from mp4chaps lines or FFmpeg's
/// metadata file, listed alike by ffprobe -show_chapters and mutagen.
final class TagChapterTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func ffprobeChapters(_ path: String) throws -> [String] {
        let run = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-show_entries",
                                          "chapter=start_time:chapter_tags=title", "-of", "csv=p=0", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    func mutagenChapters(_ path: String) throws -> [String] {
        let run = try runTool("python3", ["-c", "import sys; from mutagen.mp4 import MP4\n"
                                          + "for c in MP4(sys.argv[1]).chapters: print('%.3f,%s' % (c.start, c.title))",
                                          path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    func testBothFormsAreWrittenAndReadAlike() throws {
        let forms = [
            "00:00:00.000 Intro\n# a comment\n\n00:00:00.500 Middle, part ✓\n0:01.250 End\n",
            ";FFMETADATA1\ntitle=whole\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=Intro\n"
                + "[CHAPTER]\nTIMEBASE=1/10\nSTART=5\nEND=12\ntitle=Middle, part ✓\n"
                + "[CHAPTER]\nTIMEBASE=1/1000\nSTART=1250\nEND=2000\ntitle=End\n",
        ]
        for (n, text) in forms.enumerated() {
            let path = directory.write("song\(n).m4a", readFile(fixture("meta-itunes.m4a")))
            let list = directory.write("chapters\(n).txt", Array(text.utf8))
            let before = try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", path]).stdout
            let run = try runCLI(["tag", "--chapters-from", list, path])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.contains("chapter 00:00:00.500 Middle, part ✓"), run.stdout)
            XCTAssertEqual(try ffprobeChapters(path), ["0.000000,Intro", "0.500000,\"Middle, part ✓\"", "1.250000,End"])
            XCTAssertEqual(try mutagenChapters(path), ["0.000,Intro", "0.500,Middle, part ✓", "1.250,End"])
            XCTAssertEqual(try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", path]).stdout,
                           before)
            XCTAssertEqual(try runCLI(["tag", "--remove-chapters", path]).status, 0)
            XCTAssertEqual(try ffprobeChapters(path), [])
        }
    }

    func testRefusals() throws {
        let path = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        let original = readFile(path)
        let bad = directory.write("bad.txt", Array("1:00 fine\nnot a time\n".utf8))
        let run = try runCLI(["tag", "--chapters-from", bad, path])
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("line 2"), run.stderr)
        let many = directory.write("many.txt", Array((0..<256).map { "\($0):00.000 Chapter \($0)\n" }.joined().utf8))
        XCTAssertEqual(try runCLI(["tag", "--chapters-from", many, path]).status, 69, "more than chpl's 255")
        XCTAssertEqual(readFile(path), original)
        // A QuickTime chapter track wins in readers: replacing only chpl would contradict it.
        let both = directory.write("both.mp4", readFile(fixture("meta-chapters-both.mp4")))
        let ok = directory.write("ok.txt", Array("00:00:00.000 One\n".utf8))
        XCTAssertEqual(try runCLI(["tag", "--chapters-from", ok, both]).status, 69)
        XCTAssertEqual(readFile(both), readFile(fixture("meta-chapters-both.mp4")))
    }
}
