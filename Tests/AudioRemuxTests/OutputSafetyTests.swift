@testable import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The promises made to people's files: an existing file is never replaced unless asked,
/// output appears complete or not at all, and nothing is left behind on failure.
final class OutputSafetyTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }
    lazy var input = directory.write("in.mp4", SyntheticMovie().build())

    func assertNoTemporaryFiles(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(directory.contents.contains { $0.contains(".extract-audio-") },
                       "temporary file left: \(directory.contents)", file: file, line: line)
    }

    func testExistingDestinationIsNotTouched() {
        let precious = directory.write("out.m4a", Array("precious recording".utf8))
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: precious)) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .destinationExists)
        }
        XCTAssertEqual(readFile(precious), Array("precious recording".utf8))
        assertNoTemporaryFiles()
    }

    func testOverwriteReplacesTheDestination() throws {
        let old = directory.write("out.m4a", Array("old".utf8))
        let result = try AudioExtractor.extract(from: input, to: old, options: ExtractionOptions(overwrite: true))
        XCTAssertEqual(UInt64(readFile(old).count), result.bytesWritten)
        XCTAssertEqual(try Movie(reading: MemoryByteSource(readFile(old))).fileType?.majorBrand, .m4a)
        assertNoTemporaryFiles()
    }

    func testSameFileIsRefusedEvenWithOverwrite() throws {
        let original = readFile(input)
        for overwrite in [false, true] {
            XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: input,
                                                            options: ExtractionOptions(overwrite: overwrite))) {
                XCTAssertEqual(($0 as? RemuxError)?.code, .sameFile)
            }
        }
        let link = directory.file("link.m4a")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: link, options: ExtractionOptions(overwrite: true))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .sameFile)
        }
        XCTAssertEqual(readFile(input), original)
    }

    func testMissingOutputDirectory() {
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("missing/out.m4a"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cannotCreateOutput)
            XCTAssertTrue("\($0)".contains("does not exist"), "\($0)")
        }
    }

    func testMissingInput() {
        XCTAssertThrowsError(try AudioExtractor.extract(from: directory.file("nope.mp4"), to: directory.file("o.m4a"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cannotOpenInput)
        }
        XCTAssertThrowsError(try AudioExtractor.extract(from: directory.path, to: directory.file("o.m4a"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cannotOpenInput, "a directory is not an input")
        }
    }

    func testDestinationCreatedMeanwhileIsNeverClobbered() throws {
        let destination = directory.file("raced.m4a")
        var output = try OutputFile(destination: destination, overwrite: false)
        try output.write(Array("our output".utf8))
        XCTAssertTrue(baseName(of: output.temporaryPath).hasPrefix(".raced.m4a.extract-audio-"))
        directory.write("raced.m4a", Array("someone else's".utf8))
        XCTAssertThrowsError(try output.publish(overwrite: false)) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .destinationExists)
        }
        output.discard()
        XCTAssertEqual(readFile(destination), Array("someone else's".utf8))
        assertNoTemporaryFiles()
    }

    /// A tag rewrite publishes over the file it read only while that file is still there,
    /// unchanged: a file another program renamed over it meanwhile is kept as it is.
    func testRewriteNeverReplacesAFileThatReplacedTheOriginal() throws {
        func version(_ path: String) -> EditedFile {
            var status = stat()
            XCTAssertEqual(stat(path, &status), 0)
            return EditedFile(status)
        }
        let destination = directory.write("edited.m4a", Array("the original".utf8))
        let read = version(destination)
        var output = try OutputFile(destination: destination, overwrite: true, keeping: read)
        try output.write(Array("the rewrite".utf8))
        let staged = directory.write("staged", Array("another program's file".utf8))
        XCTAssertEqual(rename(staged, destination), 0)
        XCTAssertThrowsError(try output.publish(replacing: read)) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .fileBusy, "\($0)")
        }
        output.discard()
        XCTAssertEqual(readFile(destination), Array("another program's file".utf8))
        XCTAssertEqual(directory.contents, ["edited.m4a"])

        let current = version(destination)
        var again = try OutputFile(destination: destination, overwrite: true, keeping: current)
        try again.write(Array("the rewrite".utf8))
        try again.publish(replacing: current)
        XCTAssertEqual(readFile(destination), Array("the rewrite".utf8))
        XCTAssertEqual(directory.contents, ["edited.m4a"])
    }

    func testTemporaryFilesAreRemovedOnSignal() throws {
        var output = try OutputFile(destination: directory.file("sig.m4a"), overwrite: false)
        try output.write([1, 2, 3])
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.temporaryPath))
        TemporaryFiles.removeAll()  // What the CLI's SIGINT/SIGTERM handler calls.
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.temporaryPath))
        output.discard()
    }

    func testTruncatedSampleDataIsRefusedWithNothingWritten() {
        let whole = SyntheticMovie().build()
        let cut = directory.write("cut.mp4", Array(whole[..<(whole.count - 300)]))
        XCTAssertThrowsError(try AudioExtractor.extract(from: cut, to: directory.file("cut.m4a"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .truncatedInput)
            XCTAssertTrue("\($0)".contains("is truncated"), "\($0)")
        }
        XCTAssertFalse(directory.contents.contains("cut.m4a"))
        assertNoTemporaryFiles()
    }
}
