import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Issue 30: every error a recipe throws about a bad input names that file, says where when a
/// box is at fault (and `boxPath` is nil where none is), and says what a file that is not an
/// MP4 looks like, instead of reading its first bytes as a box size.
final class ErrorNamingTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    /// Each public entry point that takes a path, over one input of each kind of fault.
    func entryPoints(_ path: String) -> [(String, () throws -> Void)] {
        [
            ("extract", { _ = try AudioExtractor.extract(from: path, to: self.directory.file("x.m4a")) }),
            ("probe", { _ = try AudioExtractor.probe(path) }),
            ("remux", {
                // A remux that drops a damaged track writes the rest: a fresh output each time.
                try? FileManager.default.removeItem(atPath: self.directory.file("r.mp4"))
                try Remux.run(from: path, to: self.directory.file("r.mp4"))
            }),
            ("tags", { _ = try TagFile.read(path) }),
            ("mux video", {
                try? FileManager.default.removeItem(atPath: self.directory.file("m.mp4"))
                _ = try BackgroundMusic.mux(video: path, music: [fixture("aac-48k-mono.mp4")],
                                            to: self.directory.file("m.mp4"))
            }),
            ("mux clip", {
                _ = try BackgroundMusic.mux(video: fixture("aac-h264-faststart.mp4"), music: [path],
                                            to: self.directory.file("c.mp4"))
            }),
            ("concat", {
                try? FileManager.default.removeItem(atPath: self.directory.file("j.m4a"))
                _ = try Concatenation.join([fixture("aac-48k-mono.mp4"), path], to: self.directory.file("j.m4a"))
            }),
            ("package", {
                try? FileManager.default.removeItem(atPath: self.directory.file("p"))
                _ = try Packager.run(from: path, to: self.directory.file("p"))
            }),
        ]
    }

    func testErrorsAboutAnInputNameIt() throws {
        let text = directory.write("notes.mp4", Array("#EXTM3U\nThis is a playlist, not a movie.\n".utf8))
        let jpeg = directory.write("photo.mp4", readFile(fixture("images/cover.jpg")))
        let empty = directory.write("empty.mp4", [])
        let inputs: [(String, RemuxError.Code, String?)] = [
            (text, .invalidInput, "it looks like a text file"),
            (jpeg, .invalidInput, "it looks like a JPEG image"),
            (empty, .invalidInput, nil),
            (fixture("corrupt/stsz-count-mismatch.mp4"), .invalidInput, nil),
            (fixture("corrupt/box-past-parent.mp4"), .invalidInput, nil),
            (fixture("aac-h264-faststart-truncated.mp4"), .truncatedInput, nil),
        ]
        for (path, code, says) in inputs {
            for (name, call) in entryPoints(path) {
                do {
                    try call()
                    // A damaged sample table is still a file whose tags and boxes can be read;
                    // a remux drops its damaged track and copies the intact one (issue 32).
                    let damagedTrack = path.hasSuffix("stsz-count-mismatch.mp4")
                    XCTAssertTrue(name == "tags" || name == "probe"
                                    || (["remux", "mux video", "concat", "package"].contains(name) && damagedTrack),
                                  "\(name) \(path): no error")
                } catch let error as RemuxError {
                    XCTAssertTrue(error.message.contains(path), "\(name): \(error.message)")
                    XCTAssertFalse(error.message.contains("extract-audio reads"), "a library error names no CLI: \(error.message)")
                    XCTAssertNotEqual(error.boxPath, "", "\(name) \(path): nil, not empty, where no box applies")
                    // A join's inputs are files, not "the video" (a mux's): an audio-only join
                    // once said "the video (NAME)".
                    if name == "concat" { XCTAssertFalse(error.message.contains("the video"), error.message) }
                    if let says {
                        XCTAssertEqual(error.code, code, "\(name) \(path)")
                        XCTAssertTrue(error.message.contains(says), "\(name): \(error.message)")
                        XCTAssertFalse(error.message.contains("bytes"), "no box size read from text: \(error.message)")
                    }
                    if name == "extract" { XCTAssertEqual(error.code, code, "\(path): \(error.message)") }
                }
            }
        }
    }

    /// The message of a box at fault keeps the box path and offset after the file's name.
    func testABoxAtFaultIsNamedAfterTheFile() throws {
        let path = fixture("corrupt/stsz-count-mismatch.mp4")
        XCTAssertThrowsError(try AudioExtractor.extract(from: path, to: directory.file("y.m4a"))) { error in
            guard let error = error as? RemuxError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.message.hasPrefix(path + ": "), error.message)
            XCTAssertNotNil(error.boxPath)
            XCTAssertTrue(error.message.contains(error.boxPath ?? "?"), error.message)
        }
    }
}
