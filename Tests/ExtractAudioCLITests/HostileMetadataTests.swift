import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Inputs whose audio FFmpeg reads but whose metadata, sample entry or chapter reference
/// would make our output unreadable or not audio-only (issue 11, points 4, 18, 19, 20).
/// Each output is checked by the readers themselves: `ffprobe -v error` must succeed and
/// see exactly one stream, AAC audio, and GStreamer's `qtdemux` must read it. The readers
/// are required: a missing one fails the test.
final class HostileMetadataTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    // MARK: Building blocks

    static func rawBox(_ type: FourCC, _ body: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.box(type) { $0.write(bytes: body) }
        return w.bytes
    }

    /// `levels` boxes of `type`, each inside the next: the outermost is returned.
    static func chain(_ type: FourCC, levels: Int) -> [UInt8] {
        var box = rawBox(type, [])
        for _ in 1..<levels { box = rawBox(type, box) }
        return box
    }

    /// A `udta` holding an iTunes title, so that what is kept can be told from what is dropped.
    static let titleMeta: [UInt8] = rawBox("meta", [0, 0, 0, 0]
        + HandlerBox(handlerType: "mdir", name: "").serialized
        + rawBox("ilst", rawBox(FourCC(rawValue: 0xA96E_616D), rawBox("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array("Kept title".utf8)))))

    /// `file` with `box` appended at the end of the container at `path` (the first `trak`
    /// whose bytes satisfy `pick`), every container on the way rebuilt with its new size and
    /// the chunk offsets moved by the inserted bytes. `moov` must come before `mdat`.
    static func inserting(_ box: [UInt8], into path: [FourCC], of file: [UInt8],
                          pick: ([UInt8]) -> Bool = { _ in true }) -> [UInt8] {
        let containers: Set<FourCC> = [.moov, .trak, .mdia, .minf, .stbl, "udta"]
        let delta = UInt64(box.count)
        var inserted = false
        func rebuild(_ bytes: [UInt8], current: [FourCC], onPath: Bool, into w: inout BoxWriter) {
            var reader = ByteReader(bytes)
            while let (header, payload) = try! reader.readBox(depth: 1) {
                var body = payload
                let whole = reader.bytes(of: header)
                if containers.contains(header.type) {
                    let here = current + [header.type]
                    let childOnPath = onPath && here.count <= path.count && Array(path.prefix(here.count)) == here
                        && (header.type != .trak || pick(whole)) && !inserted
                    w.box(header.type) { inner in
                        rebuild(body.readRemainingBytes(), current: here, onPath: childOnPath, into: &inner)
                        if childOnPath && here == path && !inserted {
                            inner.write(bytes: box)
                            inserted = true
                        }
                    }
                } else if header.type == .stco || header.type == .co64 {
                    w.fullBox(header.type, version: 0, flags: 0) { table in
                        _ = try! body.readUInt32()
                        let count = try! body.readUInt32()
                        table.write(count)
                        for _ in 0..<count {
                            if header.type == .stco {
                                table.write(UInt32(UInt64(try! body.readUInt32()) + delta))
                            } else {
                                table.write(try! body.readUInt64() + delta)
                            }
                        }
                    }
                } else {
                    w.write(bytes: whole)
                }
            }
        }
        var w = BoxWriter()
        rebuild(file, current: [], onPath: true, into: &w)
        precondition(inserted, "no \(path) in the file")
        return w.bytes
    }

    // MARK: Checking outputs with the readers

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    struct ToolRun {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs an oracle; a missing one throws ``missingOracle(_:)`` (a skip, or a failure under
    /// CI), so the callers' `nil` branches are never taken.
    static func run(_ tool: String, _ arguments: [String]) throws -> ToolRun? {
        guard let path = which(tool) else { throw missingOracle(tool) }
        let process = Process()
        // A reader that hangs on a bad file is a failure, not a stuck test run.
        process.executableURL = URL(fileURLWithPath: which("timeout") ?? "/usr/bin/timeout")
        process.arguments = ["-k", "5", "120", path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// ffprobe reads `path` without an error and sees one stream, AAC audio (and, with
    /// `chapters`, the chapter track, which FFmpeg lists as a data stream); GStreamer's
    /// qtdemux reads it too. (The synthetic packets are not real AAC: ffprobe's complaints
    /// about decoding them are not the container's fault and are not counted.)
    func assertReadable(_ path: String, _ name: String, chapters: Bool = false,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        guard let probe = try Self.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,codec_name",
                                                    "-of", "csv=p=0", path]) else {
            return XCTFail("ffprobe is not installed: the output of \(name) cannot be checked", file: file, line: line)
        }
        XCTAssertEqual(probe.status, 0, "\(name): ffprobe failed: \(probe.stderr)", file: file, line: line)
        let containerErrors = probe.stderr.split(separator: "\n").filter { $0.contains("[mov,mp4") }
        XCTAssertEqual(containerErrors, [], "\(name): FFmpeg's demuxer complained", file: file, line: line)
        let streams = probe.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(streams.filter { !$0.hasSuffix(",data") }, ["aac,audio"], "\(name): streams", file: file, line: line)
        XCTAssertEqual(streams.filter { $0.hasSuffix(",data") }, chapters ? ["bin_data,data"] : [],
                       "\(name): data streams", file: file, line: line)
        guard let gst = try Self.run("gst-launch-1.0", ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "!",
                                                        "fakesink"]) else {
            return XCTFail("gst-launch-1.0 is not installed: the output of \(name) cannot be checked",
                           file: file, line: line)
        }
        XCTAssertEqual(gst.status, 0, "\(name): GStreamer failed: \(gst.stderr)", file: file, line: line)
    }

    /// Extracts `input` (which FFmpeg must read: checked first) and checks the output with
    /// the readers. Returns the CLI run and the output's bytes.
    @discardableResult
    func extractReadable(_ input: [UInt8], _ name: String, inputAudioOnly: Bool = true, chapters: Bool = false,
                         file: StaticString = #filePath, line: UInt = #line) throws -> (CLIRun, [UInt8]) {
        let inputPath = directory.write(name + ".mp4", input)
        if inputAudioOnly {
            // The input's audio is readable: the rule applies.
            let probe = try Self.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0",
                                                 inputPath])
            XCTAssertEqual(probe?.status, 0, "\(name): FFmpeg does not read the input itself", file: file, line: line)
        }
        let output = directory.file(name + ".m4a")
        let outcome = try runCLI([inputPath, output])
        XCTAssertEqual(outcome.status, 0, "\(name): \(outcome.stderr)", file: file, line: line)
        try assertReadable(output, name, chapters: chapters, file: file, line: line)
        return (outcome, readFile(output))
    }

    static func count(_ type: String, in bytes: [UInt8]) -> Int {
        let needle = Array(type.utf8)
        guard bytes.count >= needle.count else { return 0 }
        return (0...(bytes.count - needle.count)).filter { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }.count
    }

    // MARK: Depth (points 4 and 20)

    /// Point 4: a 50,000-deep chain in `moov/udta` (no stack overflow either); the title
    /// beside it is kept, the chain is dropped with a warning naming it.
    func testFiftyThousandDeepChainInUserDataIsDroppedNotCopied() throws {
        var movie = SyntheticMovie()
        movie.extraMovieBoxes = [Self.rawBox("udta", Self.titleMeta + Self.chain("udta", levels: 50_000))]
        let input = movie.build()
        let (outcome, output) = try extractReadable(input, "deep-50000", inputAudioOnly: false)
        XCTAssertTrue(outcome.stderr.contains("moov/udta/udta"), "no warning naming the box: \(outcome.stderr)")
        XCTAssertLessThan(output.count, 20_000, "the chain was copied")
        XCTAssertEqual(Self.count("Kept title", in: output), 1, "the title beside the chain was lost")
    }

    /// Point 20: 12 levels inside `moov/udta` are refused by FFmpeg; 8 are read and kept.
    func testUserDataNestingIsCutAtWhatFFmpegReads() throws {
        for (levels, kept) in [(12, false), (9, false), (8, true)] {
            var movie = SyntheticMovie()
            movie.extraMovieBoxes = [Self.rawBox("udta", Self.titleMeta + Self.chain("udta", levels: levels))]
            let name = "udta-plus-\(levels)"
            let (outcome, output) = try extractReadable(movie.build(), name, inputAudioOnly: levels <= 8)
            XCTAssertEqual(outcome.stderr.contains("dropped moov/udta/udta"), !kept, "\(name): \(outcome.stderr)")
            XCTAssertEqual(Self.count("udta", in: output) >= levels + 1, kept, "\(name): chain kept or not")
            XCTAssertEqual(Self.count("Kept title", in: output), 1, "\(name): the title was lost")
        }
    }

    /// `trak/udta` + 8 levels is refused by FFmpeg (+ 7 read).
    func testTrackUserDataNestingIsCut() throws {
        for (levels, kept) in [(8, false), (7, true)] {
            var movie = SyntheticMovie()
            movie.extraTrackBoxes = [Self.rawBox("udta", Self.chain("udta", levels: levels))]
            let name = "trak-udta-plus-\(levels)"
            let (outcome, output) = try extractReadable(movie.build(), name, inputAudioOnly: kept)
            XCTAssertEqual(outcome.stderr.contains("/udta/udta/udta/udta/udta/udta/udta/udta: it nests deeper"), !kept, "\(name): \(outcome.stderr)")
            // trak/udta, its chain, and the moov/udta that holds the iTunSMPB item the output adds.
            XCTAssertEqual(Self.count("udta", in: output) >= levels + 2, kept, "\(name)")
        }
    }

    /// Point 20: boxes 6 deep inside the `mp4a` entry (FFmpeg reads the input's audio, 4 deep
    /// are read and kept, 5 are not).
    func testSampleEntryNestingIsCut() throws {
        for (levels, kept) in [(6, false), (5, false), (4, true)] {
            var movie = SyntheticMovie()
            movie.sampleEntries = [AudioSampleEntry.isoEntry(
                format: .mp4a, channelCount: 2, sampleRate: 44100,
                children: [SyntheticMovie.esds(objectType: 0x40, config: [0x12, 0x10]), Self.chain("udta", levels: levels)])]
            let name = "mp4a-plus-\(levels)"
            let (outcome, output) = try extractReadable(movie.build(), name, inputAudioOnly: kept)
            XCTAssertEqual(outcome.stderr.contains("stsd/mp4a/udta"), !kept, "\(name): \(outcome.stderr)")
            // The entry's chain, and the moov/udta that holds the iTunSMPB item the output adds.
            XCTAssertEqual(Self.count("udta", in: output) >= levels + 1, kept, "\(name)")
        }
    }

    /// Class 19/20 in mux and remux (found by the structured fuzzer's mux of a clip): a sound
    /// entry's children are checked as extraction checks them when the entry is copied, as a
    /// music clip's or a remuxed track's. A `moov` inside the `mp4a` made FFmpeg see a second
    /// movie; a 6-deep chain is past what it reads.
    func testMuxAndRemuxCheckTheSampleEntriesTheyCopy() throws {
        try requireOracles(["ffprobe", "gst-launch-1.0"])  // Its assertions call them.
        let video = fixture("aac-h264-faststart.mp4")
        for (name, child, path) in [("moov-in-mp4a", Self.rawBox(.moov, Self.rawBox("udta", [])), "stsd/mp4a/moov"),
                                    ("deep-in-mp4a", Self.chain("udta", levels: 6), "stsd/mp4a/udta")] {
            var movie = SyntheticMovie(sampleCount: 80)
            movie.editList = nil
            movie.sampleEntries = [AudioSampleEntry.isoEntry(
                format: .mp4a, channelCount: 2, sampleRate: 44100,
                children: [SyntheticMovie.esds(objectType: 0x40, config: [0x12, 0x10]), child])]
            let clip = directory.write(name + ".m4a", movie.build())
            let muxed = directory.file(name + "-mux.mp4")
            let mux = try runCLI(["mux", video, "--audio", clip, muxed])
            XCTAssertEqual(mux.status, 0, "\(name): \(mux.stderr)")
            XCTAssertTrue(mux.stderr.contains(path), "\(name): no warning naming the box: \(mux.stderr)")
            XCTAssertFalse(mux.stderr.contains("dropped dropped"), mux.stderr)
            let remuxed = directory.file(name + "-remux.mp4")
            let remux = try runCLI(["remux", clip, remuxed])
            XCTAssertEqual(remux.status, 0, "\(name): \(remux.stderr)")
            XCTAssertTrue(remux.stderr.contains(path), "\(name): no warning naming the box: \(remux.stderr)")
            for output in [muxed, remuxed] {
                let bytes = readFile(output)
                XCTAssertEqual(Self.count("moov", in: bytes), 1, "\(output): a moov copied into the entry")
                XCTAssertLessThan(Self.count("udta", in: bytes), 6, "\(output): the chain was copied")
                let probe = try XCTUnwrap(try Self.run("ffprobe", ["-v", "error", "-show_entries",
                                                                    "stream=codec_type", "-of", "csv=p=0", output]),
                                          "ffprobe is not installed")
                XCTAssertEqual(probe.status, 0, "\(output): \(probe.stderr)")
                XCTAssertEqual(probe.stderr.split(separator: "\n").filter { $0.contains("[mov,mp4") }, [], output)
                XCTAssertEqual(probe.stdout.split(separator: "\n").filter { $0 == "audio" }.count, 1, output)
            }
        }
    }

    /// Point 20: an `elng` of size 0 as the last child of `mdia` reads fine in the input;
    /// copied with its size 0 before our `minf`, it swallowed it (codec "unknown").
    func testSizeZeroExtendedLanguageGetsItsRealSize() throws {
        var elng: [UInt8] = [0, 0, 0, 0] + Array("elng".utf8) + [0, 0, 0, 0] + Array("en-US".utf8) + [0]
        let input = Self.inserting(elng, into: [.moov, .trak, .mdia], of: SyntheticMovie().build())
        let (_, output) = try extractReadable(input, "elng-size-0")
        elng.replaceSubrange(0..<4, with: [0, 0, 0, UInt8(elng.count)])
        XCTAssertEqual(Self.count("elng", in: output), 1)
        let index = output.count < elng.count ? nil : (0...(output.count - elng.count)).first { output[$0..<($0 + elng.count)].elementsEqual(elng) }
        XCTAssertNotNil(index, "the elng box was not copied with its real size")
    }

    /// A `covr` whose size runs past its parent (4 GB) is dropped with a warning, the rest of
    /// the metadata kept (it used to refuse the whole file).
    func testLyingItemSizeIsDropped() throws {
        var covr = Self.rawBox("covr", [0, 0, 0, 16] + Array("data".utf8) + [0, 0, 0, 13, 0, 0, 0, 0])
        covr.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0x00])
        var movie = SyntheticMovie()
        movie.extraMovieBoxes = [Self.rawBox("udta", Self.titleMeta + Self.rawBox("meta", [0, 0, 0, 0]
            + Self.rawBox("ilst", covr)))]
        let (outcome, output) = try extractReadable(movie.build(), "covr-4-GB", inputAudioOnly: false)
        XCTAssertTrue(outcome.stderr.contains("moov/udta/meta/ilst/covr"), outcome.stderr)
        XCTAssertEqual(Self.count("covr", in: output), 0)
        XCTAssertEqual(Self.count("Kept title", in: output), 1)
    }

    // MARK: Nothing but the audio (point 19)

    /// A `tref/chap` of the audio track naming the video track: the video is not copied.
    func testChapterReferenceToVideoDoesNotCopyTheVideo() throws {
        let original = readFile(fixture("aac-h264-faststart.mp4"))
        let tref = Self.rawBox("tref", Self.rawBox("chap", [0, 0, 0, 1]))  // Track 1 is the H.264 track.
        let input = Self.inserting(tref, into: [.moov, .trak], of: original) { trak in
            Self.count("soun", in: trak) > 0
        }
        let (outcome, output) = try extractReadable(input, "chap-to-video", inputAudioOnly: false)
        XCTAssertEqual(Self.count("avc1", in: output), 0, "the video's sample entry is in the output")
        XCTAssertEqual(Self.count("trak", in: output), 1)
        XCTAssertTrue(outcome.stderr.contains("not a text chapter track"), outcome.stderr)
    }

    /// A whole `moov` (with a video track) inside `moov/udta` is not copied.
    func testMovieInsideUserDataIsNotCopied() throws {
        let original = readFile(fixture("aac-h264-faststart.mp4"))
        var reader = ByteReader(original)
        var moov: [UInt8] = []
        while moov.isEmpty, let (header, _) = try reader.readBox(depth: 1) {
            if header.type == .moov { moov = reader.bytes(of: header) }
        }
        // Into the input's own moov/udta (FFmpeg's ©too item), beside a title.
        let input = Self.inserting(Self.titleMeta + moov, into: [.moov, "udta"], of: original)
        let (outcome, output) = try extractReadable(input, "moov-in-udta", inputAudioOnly: false)
        XCTAssertEqual(Self.count("avc1", in: output), 0)
        XCTAssertEqual(Self.count("Kept title", in: output), 1)
        XCTAssertTrue(outcome.stderr.contains("dropped moov/udta/moov"), outcome.stderr)
    }

    // MARK: Chapter track out of proportion (point 18)

    /// A text chapter track of 4 Mi one-byte samples in a 4 MiB file: not copied (more
    /// chapters than the cap), with a warning; memory, time and output stay small.
    func testHugeChapterTrackIsNotCopied() throws {
        let count: UInt32 = 4 << 20
        var movie = SyntheticMovie()
        let ftypSize = movie.fileType.serialized.count
        movie.leadingBoxes = [Self.rawBox(.free, [UInt8](repeating: 0x41, count: Int(count)))]
        movie.extraTrackBoxes = [Self.rawBox("tref", Self.rawBox("chap", [0, 0, 0, 2]))]
        movie.extraMovieBoxes = [Self.textTrack(id: 2, sampleCount: count, sampleSize: 1,
                                                chunkOffset: UInt32(ftypSize + 8))]
        let input = movie.build()
        let inputPath = directory.write("huge-chapters.mp4", input)
        let output = directory.file("huge-chapters.m4a")
        let start = Date()
        let outcome = try runCLI(["--json", inputPath, output])
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        try assertReadable(output, "huge-chapters")
        XCTAssertLessThan(readFile(output).count, 64 << 10, "the chapter track was copied")
        // Work is bounded by the output size and memory checked here; the time check only
        // catches a hang (timing targets live in Benchmarks, not in unit tests).
        XCTAssertLessThan(seconds, 60)
        let json = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        let peak = json?["peak_memory_kib"] as? Int ?? Int.max
        XCTAssertLessThan(peak, 40 << 10, "peak memory \(peak) KiB")
        let warnings = json?["warnings"] as? [String] ?? []
        XCTAssertTrue(warnings.contains { $0.contains("chapter track declares 4194304 chapters") }, "\(warnings)")
        // probe reads chapters the same bounded way.
        let probeStart = Date()
        let probe = try runCLI(["probe", "--json", inputPath])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(probeStart), 60)
    }

    /// A small text chapter track is rebuilt: FFmpeg shows the input's chapters in ours.
    func testTextChapterTrackIsKept() throws {
        let titles = ["Intro", "Middle", "End"]
        var samples: [UInt8] = []
        for title in titles { samples += [0, UInt8(title.utf8.count)] + Array(title.utf8) }
        var movie = SyntheticMovie()
        let ftypSize = movie.fileType.serialized.count
        movie.leadingBoxes = [Self.rawBox(.free, samples)]
        movie.extraTrackBoxes = [Self.rawBox("tref", Self.rawBox("chap", [0, 0, 0, 2]))]
        movie.extraMovieBoxes = [Self.textTrack(id: 2, sampleCount: 3, sampleSize: 0, sizes: titles.map {
            UInt32($0.utf8.count + 2)
        }, chunkOffset: UInt32(ftypSize + 8))]
        let input = movie.build()
        try extractReadable(input, "text-chapters", chapters: true)
        let inputChapters = try Self.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0",
                                                     directory.file("text-chapters.mp4")])
        let outputChapters = try Self.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0",
                                                      directory.file("text-chapters.m4a")])
        XCTAssertEqual(inputChapters?.stdout.split(separator: "\n").count, 3)
        // Times are in each file's own timescale: compare the titles and start seconds.
        func summary(_ text: String?) -> [String] {
            (text ?? "").split(separator: "\n").map { line in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return "\(fields[3]) \(fields.last ?? "")"
            }
        }
        XCTAssertEqual(summary(outputChapters?.stdout), summary(inputChapters?.stdout))
    }

    /// The chapter track's sample entry is checked like the audio's: a chain 6 deep inside
    /// its `tx3g` entry is dropped, the chapters kept.
    func testChapterEntryNestingIsCut() throws {
        let title = "Only"
        let sample = [0, UInt8(title.utf8.count)] + Array(title.utf8)
        var movie = SyntheticMovie()
        let ftypSize = movie.fileType.serialized.count
        movie.leadingBoxes = [Self.rawBox(.free, sample)]
        movie.extraTrackBoxes = [Self.rawBox("tref", Self.rawBox("chap", [0, 0, 0, 2]))]
        movie.extraMovieBoxes = [Self.textTrack(id: 2, sampleCount: 1, sampleSize: UInt32(sample.count),
                                                chunkOffset: UInt32(ftypSize + 8),
                                                entryChildren: Self.chain("udta", levels: 6))]
        let (outcome, _) = try extractReadable(movie.build(), "tx3g-plus-6", inputAudioOnly: false, chapters: true)
        XCTAssertTrue(outcome.stderr.contains("stsd/tx3g/udta"), outcome.stderr)
        let chapters = try Self.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0",
                                                directory.file("tx3g-plus-6.m4a")])
        XCTAssertEqual(chapters?.stdout.split(separator: "\n").count, 1)
    }

    /// A QuickTime-style text track (`text` handler, `tx3g` entry), samples in one chunk.
    static func textTrack(id: UInt32, sampleCount: UInt32, sampleSize: UInt32, sizes: [UInt32] = [],
                          chunkOffset: UInt32, entryChildren: [UInt8] = []) -> [UInt8] {
        var w = BoxWriter()
        w.box(.trak) { trak in
            trak.fullBox(.tkhd, version: 0, flags: 2) { t in
                t.writeZeros(8)
                t.write(id)
                t.writeZeros(4)
                t.write(UInt32(100))
                t.writeZeros(16)
                for value in MovieHeaderBox.identityMatrix { t.write(value) }
                t.writeZeros(8)
            }
            trak.box(.mdia) { mdia in
                mdia.fullBox(.mdhd, version: 0, flags: 0) { m in
                    m.writeZeros(8)
                    m.write(UInt32(1000))
                    m.write(UInt32(100))
                    m.write(UInt16(0x55C4))
                    m.write(UInt16(0))
                }
                HandlerBox(handlerType: "text", name: "Chapters").write(to: &mdia)
                mdia.box(.minf) { minf in
                    minf.fullBox("nmhd", version: 0, flags: 0) { _ in }
                    minf.box(.dinf) { DataReferenceBox.selfContained.write(to: &$0) }
                    minf.box(.stbl) { stbl in
                        var entry = BoxWriter()
                        entry.box("tx3g") { e in
                            e.writeZeros(6)
                            e.write(UInt16(1))
                            e.writeZeros(30)  // display flags, justification, colour, box and style records
                            e.write(bytes: entryChildren)
                        }
                        SampleDescriptionBox(entries: [.init(format: "tx3g", bytes: entry.bytes)]).write(to: &stbl)
                        let delta: UInt32 = sampleCount > 1000 ? 1 : 30
                        TimeToSampleBox(entries: [.init(sampleCount: sampleCount, sampleDelta: delta)]).write(to: &stbl)
                        SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: sampleCount,
                                                         sampleDescriptionIndex: 1)]).write(to: &stbl)
                        stbl.fullBox(.stsz, version: 0, flags: 0) { s in
                            s.write(sampleSize)
                            s.write(sampleCount)
                            if sampleSize == 0 { for size in sizes { s.write(size) } }
                        }
                        ChunkOffsetBox(offsets: [UInt64(chunkOffset)]).write(to: &stbl)
                    }
                }
            }
        }
        return w.bytes
    }
}
