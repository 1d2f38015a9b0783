import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Every input the fuzz targets (`Fuzz/`) once crashed, hung or blew the memory limit on,
/// minimised, in `Fixtures/fuzz/`, named after the defect. Each goes through both entry
/// points the targets exercise — the parser with its sample-table checks, and extraction
/// into memory — and must come back with a result or a typed error. A trap ends the test
/// process, which fails the run.
///
/// The committed seed corpus (`Fuzz/corpus/`) goes through the same paths as a smoke test.
final class FuzzRegressionTests: XCTestCase {
    /// What a regression input must produce, where it is known: the parser error code of
    /// the track's sample tables (`nil`: they are valid) and the extraction error code
    /// (`nil`: extraction succeeds).
    static let expected: [String: (table: ISOBMFFError.Code?, extraction: RemuxError.Code?)] = [
        // stsc entry 27 starts at chunk 53 and entry 28 at chunk 49: the chunk count of entry 27
        // (next first chunk minus its own) was computed before entry 28's order check.
        "stsc-first-chunk-decreasing-next-entry.mp4": (.invalidSampleTable, .invalidInput),
        // The rest are made by Fuzz/craft-regressions.py (Fixtures/fuzz/README.md).
        // 2048 chunks over the same 8 KiB: 16 Mi samples from a 17 KB file (a hang, then memory).
        "stco-chunks-overlap-16m-samples.mp4": (.invalidSampleTable, .invalidInput),
        // Cut inside mdat, with one chunk of 2^30 samples: salvage expanded 2^30 durations (4 GiB).
        // Salvaged, it holds the 1000 samples before the cut.
        "truncated-stts-2e30-samples.mp4": (.invalidSampleTable, nil),
        // From the structured target: a chapter text entry its output check misread as a
        // sound entry (a false finding); the file extracts, and both players read the output.
        "structured-text-entry-false-size0.mp4": (nil, nil),
        // From the structured target's mux: an avc1 entry holding an `stsd` of size 0 was
        // copied into the mux output as it was (FFmpeg: "Duplicate stsd"). Its audio extracts;
        // MuxHardeningTests muxes it.
        "structured-mux-avc1-stsd-inside-entry.mp4": (nil, nil),
        // A chapter track starting 2^64 - 2 ticks in: the audio is intact (the traps were in
        // the recipes' conversions of the chapters' times; HardeningCLITests runs them).
        "chapter-empty-edit-2e64.mp4": (nil, nil),
        // A Nero chapter 2^63 × 100 ns in, and an audio edit list opening with two empty edits
        // of 4.2e17 ticks: the media is intact; the traps were in `--split-chapters` and `remux`.
        "chpl-chapter-start-2e63.mp4": (nil, nil),
        "elst-two-empty-edits-4e17.mp4": (nil, nil),
        // 2000 truns of 90,000 samples: the limit was checked per run, so all were built first.
        "trun-sample-limit-per-run-not-per-moof.mp4": (nil, .invalidInput),
        // From the recipes target: a video track whose mdhd timescale is 0 (remux let the
        // writer's refusal escape untyped); its audio track holds no whole sample.
        "recipes-remux-mdhd-timescale-0.mp4": (nil, .truncatedInput),
    ]

    static func files(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixture(folder))) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
    }

    func testRegressionFolderIsNotEmpty() {
        XCTAssertFalse(Self.files(in: "fuzz").isEmpty, "no fuzz regressions found in \(fixture("fuzz"))")
    }

    func testEveryRegressionReturnsOrThrowsATypedError() throws {
        for name in Self.files(in: "fuzz") {
            let bytes = readFile(fixture("fuzz/" + name))
            XCTAssertFalse(bytes.isEmpty, name)
            let tableError = parse(bytes, name: name)
            let extractionError = extract(bytes, name: name)
            if let wanted = Self.expected[name] {
                XCTAssertEqual(tableError, wanted.table, "\(name): sample table check")
                XCTAssertEqual(extractionError, wanted.extraction, "\(name): extraction")
            }
        }
    }

    func testEveryRegressionHasAnExpectation() {
        for name in Self.files(in: "fuzz") {
            XCTAssertNotNil(Self.expected[name], "\(name): add its expected outcome to FuzzRegressionTests.expected")
        }
    }

    func testSeedCorpusReturnsOrThrowsATypedError() throws {
        var count = 0
        for target in ["box-parser", "extraction"] {
            let folder = fixturesDirectory + "/../Fuzz/corpus/" + target
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names.sorted() {
                let bytes = readFile(folder + "/" + name)
                _ = parse(bytes, name: "\(target)/\(name)")
                _ = extract(bytes, name: "\(target)/\(name)")
                count += 1
            }
        }
        XCTAssertGreaterThan(count, 0, "no seed corpus under Fuzz/corpus/")
    }

    /// The recipes target's path (issue 29), in memory: remux whole and cut, an audio cut,
    /// --split-chapters and tag listing over every regression input and the recipes seed
    /// corpus, each a result or a typed error; the three crafted times of issue 29 give what
    /// the command line gives for them.
    func testRecipesOverEveryRegressionInMemory() throws {
        var inputs = Self.files(in: "fuzz").map { ($0, readFile(fixture("fuzz/" + $0))) }
        let folder = fixturesDirectory + "/../Fuzz/corpus/recipes"
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
            inputs.append(("recipes/" + name, readFile(folder + "/" + name)))
        }
        var splits: [String: Result<ChapterSplit, RemuxError>] = [:]
        for (name, bytes) in inputs {
            let source = MemoryByteSource(bytes)
            let far = CutRange(from: CutTime(nanoseconds: UInt64.max - 1), to: nil)
            let half = CutRange(from: CutTime(nanoseconds: 500_000_000), to: CutTime(nanoseconds: 1_000_000_000))
            for options in [RemuxOptions(), RemuxOptions(range: half), RemuxOptions(range: far)] {
                var sink = MemoryByteSink()
                if let result = recipe(name, { try Remux.run(from: source, to: &sink, options: options) }) {
                    XCTAssertEqual(UInt64(sink.data.count), result.bytesWritten, name)
                }
            }
            for range in [half, far] {
                var options = ExtractionOptions()
                options.range = range
                var sink = MemoryByteSink()
                if let result = recipe(name, { try AudioExtractor.extract(from: source, to: &sink, options: options) }) {
                    XCTAssertEqual(UInt64(sink.data.count), result.bytesWritten, name)
                }
            }
            do {
                let split = try ChapterSplit(source: source)
                splits[name] = .success(split)
                for piece in split.pieces {
                    var sink = MemoryByteSink()
                    _ = recipe(name, { try split.write(piece, from: source, to: &sink) })
                }
            } catch {
                splits[name] = .failure(error)
            }
            let listed = recipe(name, { try TagFile.list(source) })
            for chapter in listed?.chapters ?? [] { _ = MediaTime.clock(seconds: chapter.start) }
            var changes = TagChanges()
            changes.chapters = [Chapter(title: "far", start: 9.3e18), Chapter(title: "nan", start: .nan)]
            _ = recipe(name, { try TagFile.list(source, applying: changes) })
        }
        // A track counting in 0 ticks a second is damage: dropped, named, the rest copied. The
        // fuzzer's file ends inside a garbage box claiming 1.9 GB after moov, which makes it a
        // file cut short (refused whole, as extraction refuses it); its ftyp + moov alone, a
        // whole init segment, reach the timescale.
        var sink = MemoryByteSink()
        let found = readFile(fixture("fuzz/recipes-remux-mdhd-timescale-0.mp4"))
        XCTAssertThrowsError(try Remux.run(from: MemoryByteSource(found), to: &sink)) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .truncatedInput, "\(error)")
        }
        sink = MemoryByteSink()
        let zero = try Remux.run(from: MemoryByteSource(Array(found.prefix(1215))), to: &sink)
        XCTAssertEqual(zero.droppedTracks.map(\.trackID), [1])
        XCTAssertTrue(zero.droppedTracks.first?.reason.contains("mdia/mdhd: the media timescale is 0") == true,
                      "\(zero.droppedTracks)")
        // The chapter 2^63 × 100 ns in gets no piece and a warning; the one at 0 its piece.
        let nero = try XCTUnwrap(try splits["chpl-chapter-start-2e63.mp4"]?.get())
        XCTAssertEqual(nero.pieces.map(\.fileName), ["01 - One.m4a"])
        XCTAssertTrue(nero.warnings.contains { $0.contains("at or after the audio's end") }, "\(nero.warnings)")
        // The chapter track's empty edit of 2^64 - 2 ticks is no edit a movie can hold: the one
        // presentation rule sets the list aside, as for any track (FFmpeg 5.1 refuses the file:
        // "Invalid edit list duration=-2"), and the chapters start where their samples do.
        let whole = try XCTUnwrap(try splits["chapter-empty-edit-2e64.mp4"]?.get())
        XCTAssertEqual(whole.pieces.map(\.fileName),
                       ["01 - Opening Credits.m4a", "02 - Chapitre 1 — L’été.m4a", "03 - Épilogue.m4a"])
    }

    /// `body`'s result, nil for a ``RemuxError``; any other error fails the test.
    func recipe<T>(_ name: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch is RemuxError {
            return nil
        } catch {
            XCTFail("\(name): threw \(type(of: error)), not a RemuxError: \(error)")
            return nil
        }
    }

    /// The box-parser target's path: `Movie`, each track's tables (from `stbl` and from the
    /// fragments), and the box walker. Returns the code of the first track's table error.
    func parse(_ bytes: [UInt8], name: String) -> ISOBMFFError.Code? {
        let source = MemoryByteSource(bytes)
        var firstTableError: ISOBMFFError.Code?
        expectParserErrors(name) {
            let movie = try Movie(reading: source)
            for (i, track) in movie.tracks.enumerated() {
                let code = expectParserErrors(name) {
                    let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                                excluding: [movie.movieBoxRange])
                    var chunks = table.makeChunkIterator()
                    while chunks.next() != nil {}
                }
                if i == 0 { firstTableError = code }
                if movie.isFragmented {
                    expectParserErrors(name) {
                        let fragmented = try movie.fragmentedTrack(track, in: source)
                        _ = try SampleTable(boxes: fragmented.boxes, fileLength: movie.fileLength,
                                            excluding: [movie.movieBoxRange])
                    }
                }
            }
        }
        expectParserErrors(name) {
            try BoxWalker.walk(source) { _, _ in }
        }
        return firstTableError
    }

    /// The extraction target's path: into memory, then with salvage when truncated.
    func extract(_ bytes: [UInt8], name: String) -> RemuxError.Code? {
        let source = MemoryByteSource(bytes)
        var code = extractOnce(source, options: ExtractionOptions(), name: name)
        if code == .truncatedInput {
            code = extractOnce(source, options: ExtractionOptions(salvage: true), name: name)
        }
        return code
    }

    func extractOnce(_ source: MemoryByteSource, options: ExtractionOptions, name: String) -> RemuxError.Code? {
        var sink = MemoryByteSink()
        do {
            let result = try AudioExtractor.extract(from: source, to: &sink, options: options)
            XCTAssertEqual(UInt64(sink.data.count), result.bytesWritten, name)
            return nil
        } catch {
            // Typed throws: the compiler holds that nothing but a RemuxError comes out.
            return error.code
        }
    }

    @discardableResult
    func expectParserErrors(_ name: String, _ body: () throws -> Void) -> ISOBMFFError.Code? {
        do {
            try body()
            return nil
        } catch let error as ISOBMFFError {
            return error.code
        } catch {
            XCTFail("\(name): the parser threw \(type(of: error)), not an ISOBMFFError: \(error)")
            return nil
        }
    }
}
