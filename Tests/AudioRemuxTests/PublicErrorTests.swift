import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Issue 30: one public error, thrown typed by every entry point; the errors of the layers
/// beneath bridged into it in one place; one cancellation outcome and one progress type for
/// every recipe; a caller's own errors given back unchanged.
final class PublicErrorTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    struct CallersOwn: Error, Equatable {
        var detail: String
    }

    /// Binding the caught error to `RemuxError` without a cast compiles only if the entry
    /// point throws `RemuxError` (typed throws): this test fails to build otherwise.
    func testEntryPointsThrowRemuxErrorTyped() async {
        let missing = directory.file("missing.mp4")
        let output = directory.file("out.mp4")
        var codes = synchronousCodes(missing, output)
        func record(_ error: RemuxError) { codes.append(error.code) }
        do { _ = try await AudioExtractor.extract(from: missing, to: output) } catch { record(error) }
        do { _ = try await Remux.run(from: missing, to: output) } catch { record(error) }
        do { _ = try await BackgroundMusic.mux(video: missing, music: [missing], to: output) } catch { record(error) }
        do { _ = try await Concatenation.join([missing, missing], to: output) } catch { record(error) }
        do { _ = try await Packager.run(from: missing, to: directory.file("p")) } catch { record(error) }
        do { _ = try await TagFile.edit(missing, applying: TagChanges()) } catch { record(error) }
        XCTAssertEqual(codes.count, 19)
        XCTAssertEqual(codes.filter { $0 == .cannotOpenInput }.count, 18, "\(codes)")
    }

    /// The tag edit's `async` form makes the same edit (ffprobe reads the title back); a task
    /// cancelled before it starts gets the one cancelled error and the file is untouched.
    func testTheTagEditHasAnAsyncForm() async throws {
        try requireOracles(["ffprobe"])
        let path = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        var changes = TagChanges()
        try changes.set("title", to: "Async title")
        _ = try await TagFile.edit(path, applying: changes)
        let probed = try runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of",
                                             "default=nw=1:nk=1", path])
        XCTAssertEqual(probed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "Async title")

        let before = readFile(path)
        try changes.set("title", to: "Never written")
        let task = Task { [changes] () async throws(RemuxError) -> TagWriteResult in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await TagFile.edit(path, applying: changes)
        }
        do {
            _ = try await task.value
            XCTFail("a cancelled edit wrote")
        } catch let error as RemuxError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertEqual(readFile(path), before, "the file is untouched")
    }

    /// A cover in memory is checked as a file is: bytes that are not an image, or not a whole
    /// one, throw a clear error instead of becoming nothing (ffprobe reads the added cover
    /// back as an attached JPEG picture).
    func testACoverFromBytesIsCheckedAndWritten() throws {
        try requireOracles(["ffprobe"])
        var changes = TagChanges()
        for (bytes, says) in [([UInt8]("GIF89a".utf8), "it starts with 47 49 46 38"), ([], "it is empty"),
                              (Array(readFile(fixture("images/cover.jpg")).prefix(200)), "not a whole JPEG image")] {
            do {
                try changes.addCover(bytes)
                XCTFail("\(says): accepted")
            } catch {
                XCTAssertEqual(error.code, .unsupportedInput)
                XCTAssertTrue(error.message.contains(says), error.message)
            }
        }
        XCTAssertTrue(changes.covers.isEmpty)
        try changes.addCover(readFile(fixture("images/cover.jpg")))
        let path = directory.write("covered.m4a", readFile(fixture("meta-itunes.m4a")))
        try TagFile.edit(path, applying: changes)
        let probed = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name:stream_disposition=attached_pic",
                                             "-of", "csv=p=0", path])
        XCTAssertTrue(probed.stdout.contains("mjpeg,1"), probed.stdout)
    }

    func synchronousCodes(_ missing: String, _ output: String) -> [RemuxError.Code] {
        var codes: [RemuxError.Code] = []
        func record(_ error: RemuxError) { codes.append(error.code) }
        do { _ = try AudioExtractor.extract(from: missing, to: output) } catch { record(error) }
        do { _ = try AudioExtractor.probe(missing) } catch { record(error) }
        do { _ = try Remux.run(from: missing, to: output) } catch { record(error) }
        do { _ = try BackgroundMusic.mux(video: missing, music: [missing], to: output) } catch { record(error) }
        do { _ = try Concatenation.join([missing, missing], to: output) } catch { record(error) }
        do { _ = try Packager.run(from: missing, to: directory.file("p")) } catch { record(error) }
        do { _ = try TagFile.read(missing) } catch { record(error) }
        do { _ = try TagFile.chapters(of: missing) } catch { record(error) }
        do { _ = try TagFile.edit(missing) { $0.set(.text(["x"]), for: .code("©nam")) } } catch { record(error) }
        do { _ = try TagFile.edit(missing, applying: TagChanges()) } catch { record(error) }
        do { _ = try InputFile(path: missing) } catch { record(error) }
        do { _ = try SegmentSource(path: missing) } catch { record(error) }
        do { _ = try ChapterFile.parse("not a chapter line") } catch { record(error) }
        return codes
    }

    /// What `TagFile.edit`'s closure throws comes back unchanged (`.change`), the file
    /// untouched; the edit's own failure is `.edit`; a closure that throws nothing gets the
    /// plain `RemuxError` form.
    func testTheEditClosuresErrorComesBackUnchanged() throws {
        let path = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        let before = readFile(path)
        do {
            try TagFile.edit(path) { (tags: inout ItemList) throws(CallersOwn) in
                tags.set(.text(["never written"]), for: .code("©nam"))
                throw CallersOwn(detail: "stop")
            }
            XCTFail("no error")
        } catch .change(let error) {
            XCTAssertEqual(error, CallersOwn(detail: "stop"))
        } catch .edit(let error) {
            XCTFail("the caller's error came back as the edit's: \(error)")
        }
        XCTAssertEqual(readFile(path), before)
        // A closure throwing a RemuxError of its own: given back as it was, not renamed.
        let own = RemuxError(.invalidArgument, "mine")
        do {
            try TagFile.edit(path) { (_: inout ItemList) throws(RemuxError) in throw own }
            XCTFail("no error")
        } catch .change(let error) {
            XCTAssertEqual(error, own)
            XCTAssertEqual(error.message, "mine")
        } catch .edit(let error) {
            XCTFail("\(error)")
        }
        // An untyped closure (a TagError of TagKey.parse): the same, as `any Error`.
        do {
            try TagFile.edit(path) { tags in tags.set(.text(["x"]), for: try TagKey.parse("not a key!")) }
            XCTFail("no error")
        } catch .change(let error) {
            XCTAssertEqual((error as? TagError)?.code, .unknownKey)
        } catch .edit(let error) {
            XCTFail("\(error)")
        }
        // The edit's own failure, with a throwing closure.
        do {
            try TagFile.edit(directory.file("missing.m4a")) { (_: inout ItemList) throws(CallersOwn) in }
            XCTFail("no error")
        } catch .edit(let error) {
            XCTAssertEqual(error.code, .cannotOpenInput)
        } catch .change(let error) {
            XCTFail("\(error)")
        }
        XCTAssertEqual(readFile(path), before)
    }

    /// The one bridge: each error type of the layers beneath becomes a `RemuxError` with the
    /// code the documentation gives; a caller's own error is kept as `underlyingError`.
    func testTheErrorsBeneathAreBridgedInOnePlace() throws {
        XCTAssertEqual(RemuxError(bridging: MuxCancelled()), .cancelled)
        XCTAssertEqual(RemuxError(bridging: TagError(.unknownKey, "no such key")),
                       RemuxError(.invalidArgument, "no such key"))
        let parse = ISOBMFFError(.endOfFile, "cut short", path: "moov/trak[1]", offset: 40)
        let truncated = RemuxError(bridging: parse)
        XCTAssertEqual(truncated.code, .truncatedInput)
        XCTAssertEqual(truncated.boxPath, "moov/trak[1]")
        XCTAssertEqual(truncated.byteOffset, 40)
        let invalid = RemuxError(bridging: ISOBMFFError(.invalidValue, "bad", path: "", offset: nil))
        XCTAssertEqual(invalid.code, .invalidInput)
        XCTAssertNil(invalid.boxPath, "nil, not empty, where no box applies")
        XCTAssertEqual(RemuxError(bridging: SegmentPlanner.Failure.timeOutOfRange).code, .unsupportedInput)
        let own = RemuxError(bridging: CallersOwn(detail: "disk gone"))
        XCTAssertEqual(own.code, .ioError)
        XCTAssertEqual(own.underlyingError as? CallersOwn, CallersOwn(detail: "disk gone"))
        XCTAssertNil(RemuxError(.ioError, "x").underlyingError)
    }

    /// A byte source of the caller's that fails: its error is kept in `underlyingError`.
    func testACallersSourceErrorIsKept() throws {
        struct FailingSource: ByteSource {
            var length: UInt64 { 1 << 20 }
            var name: String { "failing" }
            func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
                throw CallersOwn(detail: "unplugged")
            }
        }
        var sink = MemoryByteSink()
        do {
            _ = try AudioExtractor.extract(from: FailingSource(), to: &sink)
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error.code, .ioError, error.message)
            XCTAssertEqual(error.underlyingError as? CallersOwn, CallersOwn(detail: "unplugged"), error.message)
            XCTAssertTrue(error.message.contains("failing"), error.message)
        }
    }

    /// One cancellation outcome: every recipe stopped by `isCancelled` throws the same error,
    /// and leaves nothing behind.
    func testEveryRecipeCancelsWithTheSameError() throws {
        let video = fixture("aac-h264-faststart.mp4")
        let audio = fixture("aac-48k-mono.mp4")
        let stop = { true }
        let calls: [(String, () throws(RemuxError) -> Void)] = [
            ("extract", { () throws(RemuxError) in _ = try AudioExtractor.extract(from: video, to: self.directory.file("e.m4a"), isCancelled: stop) }),
            ("remux", { () throws(RemuxError) in _ = try Remux.run(from: video, to: self.directory.file("r.mp4"), isCancelled: stop) }),
            ("mux", { () throws(RemuxError) in _ = try BackgroundMusic.mux(video: video, music: [audio], to: self.directory.file("m.mp4"),
                                                  isCancelled: stop) }),
            ("concat", { () throws(RemuxError) in _ = try Concatenation.join([audio, audio], to: self.directory.file("j.m4a"), isCancelled: stop) }),
            ("package", { () throws(RemuxError) in _ = try Packager.run(from: video, to: self.directory.file("p"), isCancelled: stop) }),
        ]
        for (name, call) in calls {
            do {
                try call()
                XCTFail("\(name): not cancelled")
            } catch {
                XCTAssertEqual(error, .cancelled, name)
                XCTAssertEqual(error.message, "cancelled", name)
            }
        }
        XCTAssertEqual(directory.contents, [])
    }

    /// One progress type: every recipe reports `RemuxProgress`, growing to its total.
    func testEveryRecipeReportsTheSameProgress() throws {
        let video = fixture("aac-h264-faststart.mp4")
        let audio = fixture("aac-48k-mono.mp4")
        var reports: [String: [RemuxProgress]] = [:]
        func recorder(_ name: String) -> (RemuxProgress) -> Void { { reports[name, default: []].append($0) } }
        _ = try AudioExtractor.extract(from: video, to: directory.file("e.m4a"), progress: recorder("extract"))
        _ = try Remux.run(from: video, to: directory.file("r.mp4"), progress: recorder("remux"))
        _ = try BackgroundMusic.mux(video: video, music: [audio], to: directory.file("m.mp4"), progress: recorder("mux"))
        _ = try Concatenation.join([audio, audio], to: directory.file("j.m4a"), progress: recorder("concat"))
        _ = try Packager.run(from: video, to: directory.file("p"), progress: recorder("package"))
        XCTAssertEqual(reports.keys.sorted(), ["concat", "extract", "mux", "package", "remux"])
        for (name, list) in reports {
            XCTAssertEqual(list.map(\.bytesDone), list.map(\.bytesDone).sorted(), name)
            XCTAssertEqual(list.last?.bytesDone, list.last?.bytesTotal, name)
            XCTAssertGreaterThan(list.last?.bytesTotal ?? 0, 0, name)
            XCTAssertEqual(list.last?.fractionCompleted, 1, name)
        }
    }
}
