import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// `concat` (issue 27): lossless joins, refusals before anything is written, FFmpeg's
/// concat list, chapters and the audiobook brand. The decoded seams are judged by both
/// players in Scripts/concat-conformance.py.
final class ConcatCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func json(_ run: CLIRun) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stdout)
    }

    /// The payload bytes of every sample of the first audio track, in decode order.
    func audioPayloads(_ path: String) throws -> [[UInt8]] {
        let bytes = readFile(path)
        let source = MemoryByteSource(bytes)
        let reader = try MovieReader(reading: source)
        let track = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        return try reader.samples(of: track).map { Array(bytes[Int($0.offset)..<Int($0.offset) + Int($0.size)]) }
    }

    /// Files whose names are only in this folder: nothing but what the test expects.
    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    func testAnALACJoinIsEveryPacketOnceInOrder() throws {
        let part = fixture("codec-alac.m4a")
        let output = directory.file("joined.m4a")
        let run = try runCLI(["concat", "--json", part, part, part, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try json(run)
        XCTAssertEqual(object["dropped_packets"] as? Int, 0)
        XCTAssertEqual(object["kind"] as? String, "audio")
        let seams = try XCTUnwrap(object["seams"] as? [String: Any])
        XCTAssertEqual(seams["count"] as? Int, 2)
        XCTAssertEqual(seams["worst_start_error_ms"] as? Double, 0, "ALAC joins to the sample")
        let input = try audioPayloads(part)
        XCTAssertEqual(try audioPayloads(output), input + input + input)
        let movie = try Movie(reading: MemoryByteSource(readFile(output)))
        let audio = try XCTUnwrap(movie.tracks.first { $0.handlerType == .soun })
        XCTAssertLessThanOrEqual(audio.editList?.entries.count ?? 0, 1, "one edit for the whole track")
    }

    func testDifferentCodingsAreRefusedBeforeAnythingIsWritten() throws {
        let output = directory.file("joined.m4a")
        let run = try runCLI(["concat", fixture("codec-alac.m4a"), fixture("codec-flac.mp4"), output])
        XCTAssertEqual(run.status, 69, run.stderr)
        XCTAssertTrue(run.stderr.contains("codec-flac.mp4"), run.stderr)
        XCTAssertTrue(run.stderr.contains("coded differently"), run.stderr)
        XCTAssertEqual(names(), [], "no output, no temporary file")
        // One with video, one without.
        let mixed = try runCLI(["concat", fixture("codec-alac.m4a"), fixture("aac-48k-mono.mp4"), output])
        XCTAssertEqual(mixed.status, 69, mixed.stderr)
        XCTAssertTrue(mixed.stderr.contains("video"), mixed.stderr)
        XCTAssertEqual(names(), [])
    }

    func testAnExistingOutputIsLeftAlone() throws {
        let output = directory.write("joined.m4a", [1, 2, 3])
        let run = try runCLI(["concat", fixture("codec-alac.m4a"), fixture("codec-alac.m4a"), output])
        XCTAssertEqual(run.status, 73, run.stderr)
        XCTAssertEqual(readFile(output), [1, 2, 3])
        XCTAssertEqual(try runCLI(["concat", "--overwrite", fixture("codec-alac.m4a"), fixture("codec-alac.m4a"),
                                   output]).status, 0)
    }

    func testFFmpegsConcatListIsRead() throws {
        let part = directory.write("part one.m4a", readFile(fixture("codec-alac.m4a")))
        _ = part
        try FileManager.default.createDirectory(atPath: directory.file("sub"), withIntermediateDirectories: true)
        _ = directory.write("sub/it's.m4a", readFile(fixture("codec-alac.m4a")))
        let list = directory.write("list.txt", Array("""
            ffconcat version 1.0
            # the parts, relative to this list
            file 'part one.m4a'

            file 'sub/it'\\''s.m4a'
            file '\(fixture("codec-alac.m4a"))'
            """.utf8))
        let output = directory.file("joined.m4a")
        let run = try runCLI(["concat", "--json", "--file-list", list, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual((try json(run)["inputs"] as? [String])?.count, 3)
        XCTAssertEqual(try audioPayloads(output).count, 3 * (try audioPayloads(fixture("codec-alac.m4a")).count))

        for directive in ["duration 3", "inpoint 1", "option foo bar", "ffconcat version 2.0"] {
            let bad = directory.write("bad.txt", Array("file 'part one.m4a'\n\(directive)\n".utf8))
            let refused = try runCLI(["concat", "--file-list", bad, directory.file("other.m4a")])
            XCTAssertEqual(refused.status, 64, directive + ": " + refused.stderr)
            XCTAssertTrue(refused.stderr.contains("bad.txt:2"), refused.stderr)
        }
        XCTAssertFalse(names().contains("other.m4a"))
        // Inputs and a list together are a usage error.
        XCTAssertEqual(try runCLI(["concat", "--file-list", list, fixture("codec-alac.m4a"), output]).status, 64)
    }

    func testChaptersAndTheAudiobookBrand() throws {
        let part = fixture("codec-alac.m4a")
        let output = directory.file("book.m4b")
        let run = try runCLI(["concat", "--json", "--chapters", part, part, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try json(run)["chapters"] as? Int, 2)
        let movie = try Movie(reading: MemoryByteSource(readFile(output)))
        XCTAssertEqual(movie.fileType?.majorBrand.description, "M4B ")
        let listed = try runCLI(["tag", "--json", output])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdout.contains("codec-alac"), "titled by the file name: \(listed.stdout)")
    }
}
