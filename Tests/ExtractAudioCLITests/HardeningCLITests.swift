import Foundation
import ISOBMFF
import TestSupport
import XCTest

@testable import extract_audio

/// Issue 11, points 7–14: what the tool may replace, how it names outputs, `-` for the
/// standard streams, which options each command takes, and what `--quiet` keeps.
final class HardeningCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
        var reason: Process.TerminationReason
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs the tool with `stdin` (a file handle, or nothing), in `directory` unless told.
    func run(_ arguments: [String], stdin: Any? = nil, cwd: String? = nil,
             environment: [String: String]? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: cwd ?? directory.path)
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
        let stdout = Collected()
        let reader = Thread { stdout.data = out.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return Run(status: process.terminationStatus, stdout: stdout.data,
                   stderr: String(decoding: stderr, as: UTF8.self), reason: process.terminationReason)
    }

    final class Collected: @unchecked Sendable {
        var data = Data()
    }

    func fileType(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }

    func linkTarget(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }

    // MARK: 7, 10: only regular files are replaced; links are replaced as links

    /// Times a file claims never trap in a recipe: every command answers with a status of
    /// its own, and nothing is left behind on failure (issue 29; each of these trapped in a
    /// conversion of claimed seconds to an integer): a chapter track starting 2^64 - 2 ticks
    /// in (`tag` listing it), a Nero chapter starting 2^63 units of 100 ns in
    /// (`--split-chapters`), and two empty edits of 4.2e17 ticks each (`remux`).
    func testClaimedTimesNeverTrapInAnyCommand() throws {
        for name in ["chapter-empty-edit-2e64.mp4", "chpl-chapter-start-2e63.mp4", "elst-two-empty-edits-4e17.mp4"] {
            let input = fixture("fuzz/" + name)
            let out = directory.file("out-" + name)
            let runs: [[String]] = [
                ["tag", input], ["tag", "--json", input], ["probe", input], ["probe", "--json", input],
                ["probe", "--packets", input], ["remux", input, directory.file(name + "-r.mp4")],
                ["remux", "--from", "0.5", "--to", "1", input, directory.file(name + "-c.mp4")],
                ["--split-chapters", "-o", out, input], ["-o", directory.file(name + "-e.m4a"), input],
                ["concat", input, input, directory.file(name + "-j.m4a")],
                ["mux", fixture("aac-h264-faststart.mp4"), "--audio", input, directory.file(name + "-m.mp4")],
            ]
            XCTAssertEqual(mkdir(out, 0o755), 0)
            for arguments in runs {
                let run = try runCLI(arguments)
                XCTAssertTrue([0, 64, 65, 69].contains(run.status), "\(arguments): exit \(run.status): \(run.stderr)")
                XCTAssertFalse(run.stderr.contains("Swift runtime failure"), "\(arguments): \(run.stderr)")
            }
            let left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            XCTAssertTrue(left.allSatisfy { !$0.hasPrefix(".") }, "\(name): temporary files left: \(left)")
        }
        // Its chapter track's empty edit of 2^64 - 2 ticks is no edit a movie can hold: the one
        // presentation rule sets the list aside, as for any track, and the chapters start where
        // their samples do (0, 1 and 2.25 s): three pieces, nothing temporary left.
        let out = directory.file("split")
        XCTAssertEqual(mkdir(out, 0o755), 0)
        let split = try runCLI(["--split-chapters", "-o", out, fixture("fuzz/chapter-empty-edit-2e64.mp4")])
        XCTAssertEqual(split.status, 0, split.stderr)
        XCTAssertEqual(((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted(),
                       ["01 - Opening Credits.m4a", "02 - Chapitre 1 — L’été.m4a", "03 - Épilogue.m4a"].sorted())
        // The chapter 2^63 × 100 ns in gets no file and a warning; the one at 0 its file.
        let far = directory.file("far")
        XCTAssertEqual(mkdir(far, 0o755), 0)
        let nero = try runCLI(["--split-chapters", "-o", far, fixture("fuzz/chpl-chapter-start-2e63.mp4")])
        XCTAssertEqual(nero.status, 0, nero.stderr)
        XCTAssertTrue(nero.stderr.contains("at or after the audio's end"), nero.stderr)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: far)) ?? [], ["01 - One.m4a"])
    }

    func testOverwriteRefusesWhatIsNotARegularFile() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let folder = directory.file("folder.m4a")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let fifo = directory.file("fifo.m4a")
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let node = directory.file("node.m4a")
        let madeNode = mknod(node, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0  // Needs root.
        var targets = [(folder, S_IFDIR, "a directory"), (fifo, S_IFIFO, "a FIFO")]
        if madeNode { targets.append((node, S_IFCHR, "a device")) }
        for (path, kind, word) in targets {
            for overwrite in [true, false] {
                let result = try run((overwrite ? ["--overwrite"] : []) + [good, path])
                XCTAssertEqual(result.status, 73, "\(path): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(path), result.stderr)
                XCTAssertTrue(result.stderr.contains(word), result.stderr)
                XCTAssertTrue(result.stderr.contains("only a regular file"), result.stderr)
                XCTAssertFalse(result.stderr.contains("--overwrite"), "no hint to force it: \(result.stderr)")
                XCTAssertEqual(fileType(path), kind, "\(path) was replaced")
            }
        }
        // Never /dev/null itself: before the fix this test replaced the device node it names.
        XCTAssertEqual(directory.contents.filter { $0.contains(".extract-audio-") }, [])
    }

    func testASymlinkIsReplacedAsALinkAndItsTargetIsUntouched() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let target = directory.write("target.m4a", [1, 2, 3])
        let link = directory.file("link.m4a")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try run([good, link])
        XCTAssertEqual(refused.status, 73, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("already exists"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--overwrite"), "the CLI adds the hint: \(refused.stderr)")
        let replaced = try run(["--overwrite", good, link])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(fileType(link), S_IFREG, "the link itself is replaced")
        XCTAssertEqual(readFile(target), [1, 2, 3], "the target is untouched")
    }

    /// A FIFO as the input, a --cover image or a --chapters-from file is refused at once
    /// (66), never waited on for a writer that may never come (issue 32).
    func testAFifoIsRefusedAtOnceWhereverAFileIsRead() throws {
        let fifo = directory.file("pipe.m4a")
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let media = directory.write("song.m4a", readFile(fixture("meta-itunes.m4a")))
        let runs: [[String]] = [
            ["probe", fifo], ["probe", "--packets", fifo], ["tag", fifo], ["-o", directory.file("out.m4a"), fifo],
            ["remux", fifo, directory.file("r.mp4")], ["tag", "--cover", fifo, media],
            ["tag", "--chapters-from", fifo, media],
        ]
        // A watchdog: should a run wait on the FIFO, a writer opening it after 10 s lets it
        // go on (and the time check below fails) instead of hanging the suite.
        let done = Locked(false)
        Thread.detachNewThread {
            var waited = 0.0
            while !done.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: 0.5)
                waited += 0.5
                if waited >= 10 {
                    let fd = open(fifo, O_WRONLY | O_NONBLOCK)
                    if fd >= 0 { close(fd) }
                }
            }
        }
        defer { done.withLock { $0 = true } }
        for arguments in runs {
            let started = Date()
            let run = try runCLI(arguments)
            XCTAssertEqual(run.status, 66, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("not a regular file"), "\(arguments): \(run.stderr)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(arguments) waited")
        }
        XCTAssertEqual(readFile(media), readFile(fixture("meta-itunes.m4a")))
    }

    func testADanglingSymlinkIsRefusedAndSaysSo() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let link = directory.file("dangling.m4a")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.file("nowhere.m4a"))
        for arguments in [[good, link], ["--overwrite", good, link]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 73, result.stderr)
            XCTAssertTrue(result.stderr.contains("symbolic link"), result.stderr)
            XCTAssertTrue(result.stderr.contains("does not exist"), result.stderr)
            XCTAssertFalse(result.stderr.contains("someone else"), result.stderr)
            XCTAssertFalse(result.stderr.contains("--overwrite"), result.stderr)
            XCTAssertEqual(linkTarget(link), directory.file("nowhere.m4a"))
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("nowhere.m4a")))
        }
    }

    func testLibraryMessagesCarryNoCommandLineFlags() throws {
        let sources = URL(fileURLWithPath: fixturesDirectory).deletingLastPathComponent()
            .appendingPathComponent("Sources")
        for module in ["AudioRemux", "ISOBMFF"] {
            let enumerator = FileManager.default.enumerator(atPath: sources.appendingPathComponent(module).path)
            while let name = enumerator?.nextObject() as? String {
                guard name.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: sources.appendingPathComponent(module + "/" + name).path,
                                      encoding: .utf8)
                let code = text.split(separator: "\n").filter {
                    !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                }
                for line in code {
                    // Any option name in code that has a string literal ("--from", "use --salvage").
                    XCTAssertFalse(line.contains("\"") && line.range(of: "--[a-z]", options: .regularExpression) != nil,
                                   "a command-line flag in a library message: \(name): \(line)")
                    XCTAssertFalse(line.contains(")..<\\("), "Swift range syntax in a message: \(name): \(line)")
                }
            }
        }
    }

    // MARK: 8: batch collisions

    func testBatchGivesInputsOfTheSameNameDistinctOutputs() throws {
        for sub in ["a", "b", "c"] {
            try FileManager.default.createDirectory(atPath: directory.file(sub), withIntermediateDirectories: false)
        }
        let first = directory.write("a/x.mp4", SyntheticMovie(sampleCount: 4).build())
        let second = directory.write("b/x.mp4", SyntheticMovie(sampleCount: 6).build())
        let third = directory.write("c/x-2.mov", SyntheticMovie(sampleCount: 8).build())
        let out = directory.file("out")
        for overwrite in [false, true] {
            let result = try run((overwrite ? ["--overwrite"] : []) + [first, second, third, "-o", out])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(),
                           ["x-2.m4a", "x-3.m4a", "x.m4a"])
            XCTAssertTrue(result.stderr.contains("3 of 3 extracted"), result.stderr)
            XCTAssertTrue(result.stderr.contains("\(second) was written as \(out)/x-3.m4a"), result.stderr)
            for (name, count) in [("x.m4a", 4), ("x-3.m4a", 6), ("x-2.m4a", 8)] {
                let movie = try Movie(reading: MemoryByteSource(readFile(out + "/" + name)))
                XCTAssertEqual(try SampleTable(boxes: movie.tracks[0].sampleTable(), fileLength: movie.fileLength)
                    .sampleCount, count, name)
            }
        }
    }

    /// A second input of a name that nearly fills NAME_MAX gets a numbered name that still
    /// fits (shortened at a character boundary), and the summary names only renamed inputs
    /// that were written.
    func testNumberedNamesFitNameMaxAndFailuresAreNotReportedAsRenamed() throws {
        for sub in ["p", "q", "r", "s"] {
            try FileManager.default.createDirectory(atPath: directory.file(sub), withIntermediateDirectories: false)
        }
        let ascii = String(repeating: "a", count: 251) + ".mp4"  // 255 bytes.
        let japanese = String(repeating: "長", count: 83) + ".mp4"  // 253 bytes.
        var video = SyntheticMovie()
        video.handler = .vide
        let inputs = [directory.write("p/" + ascii, SyntheticMovie(sampleCount: 4).build()),
                      directory.write("q/" + ascii, SyntheticMovie(sampleCount: 6).build()),
                      directory.write("r/" + japanese, SyntheticMovie(sampleCount: 4).build()),
                      directory.write("s/" + japanese, video.build())]
        let out = directory.file("out")
        let result = try run(inputs + ["-o", out])
        XCTAssertEqual(result.status, 79, result.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        XCTAssertEqual(names.count, 3, "\(names)")
        for name in names { XCTAssertLessThanOrEqual(name.utf8.count, 255, name) }
        XCTAssertTrue(names.contains(String(repeating: "a", count: 249) + "-2.m4a"), "\(names)")
        XCTAssertTrue(result.stderr.contains("3 of 4 extracted, 1 failed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(inputs[1]) was written as"), result.stderr)
        XCTAssertFalse(result.stderr.contains("\(inputs[3]) was written as"), result.stderr)
    }

    // MARK: 9: long names

    func testOutputNamesUpToNameMaxWork() throws {
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let japanese = String(repeating: "日本語の長い題名", count: 9) + ".m4a"  // 72 characters, 220 bytes.
        XCTAssertEqual(japanese.count, 76)
        let ascii = String(repeating: "a", count: 246) + ".m4a"  // 250 bytes.
        for name in [japanese, ascii] {
            let result = try run([good, directory.file(name)])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(FileManager.default.fileExists(atPath: directory.file(name)))
        }
        XCTAssertEqual(directory.contents.filter { $0.contains(".extract-audio-") }, [])
    }

    // MARK: 11: `-` for the standard streams

    func testDashReadsStandardInputAndWritesStandardOutput() throws {
        let input = fixture("aac-h264-faststart.mp4")
        let reference = directory.file("reference.m4a")
        XCTAssertEqual(try run([input, reference]).status, 0)
        let expected = readFile(reference)
        let spool = directory.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: false)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = spool

        // From a file redirected to stdin, and from a pipe.
        let fromFile = try run(["-", "from-file.m4a"], stdin: FileHandle(forReadingAtPath: input),
                               environment: environment)
        XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
        XCTAssertEqual(readFile(directory.file("from-file.m4a")), expected)
        let pipe = Pipe()
        let writer = Thread {
            pipe.fileHandleForWriting.write(Data(readFile(input)))
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let fromPipe = try run(["-", "from-pipe.m4a"], stdin: pipe, environment: environment)
        XCTAssertEqual(fromPipe.status, 0, fromPipe.stderr)
        XCTAssertEqual(readFile(directory.file("from-pipe.m4a")), expected)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool), [], "the spooled copy is removed")

        // To stdout: the bytes on stdout, the report on stderr.
        let toStdout = try run([input, "-"])
        XCTAssertEqual(toStdout.status, 0, toStdout.stderr)
        XCTAssertEqual([UInt8](toStdout.stdout), expected)
        XCTAssertTrue(toStdout.stderr.contains("wrote standard output"), toStdout.stderr)
        let json = try run(["--json", input, "-"])
        XCTAssertEqual([UInt8](json.stdout), expected)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stderr.utf8)) as? [String: Any])
        XCTAssertEqual(object["output"] as? String, "-")
        XCTAssertEqual(object["bytes"] as? Int, expected.count)
        let both = try run(["-", "-"], stdin: FileHandle(forReadingAtPath: input), environment: environment)
        XCTAssertEqual([UInt8](both.stdout), expected)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("-")), "never a file named -")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool), [])

        // A failure before the first byte writes nothing to stdout.
        let bad = try run([directory.write("noise.bin", [UInt8](repeating: 7, count: 100)), "-"])
        XCTAssertEqual(bad.status, 65)
        XCTAssertEqual(bad.stdout.count, 0)
        let empty = try run(["-", "e.m4a"], environment: environment)
        XCTAssertEqual(empty.status, 65, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("standard input is empty"), empty.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool), [])
        // mux and batch runs do not take `-`.
        XCTAssertEqual(try run(["mux", input, "--audio", input, "-"]).status, 64)
        XCTAssertEqual(try run(["-", input, "-o", directory.path]).status, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("-")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("-.m4a")))
    }

    func testAStreamThatBreaksMidwayExitsNonZero() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = [fixture("aac-5.1.mp4"), "-"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)  // A stray "-" lands there.
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try out.fileHandleForReading.close()  // The reader is gone before the first byte.
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 74, stderr)
        XCTAssertTrue(stderr.contains("standard output"), stderr)
    }

    /// The reader goes away after the first bytes of a 12 MB stream (more than a pipe
    /// holds): the tool notices mid-way, exits 74 and says how much went out.
    func testAStreamThatBreaksAfterItStartedExitsNonZero() throws {
        var movie = SyntheticMovie(sampleCount: 2)
        movie.sampleSizes = Array(repeating: 200, count: 60_000)
        movie.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 60_000, sampleDelta: 1024)])
        movie.chunkOffsets = stride(from: 0, to: 60_000, by: 2).map { UInt64($0) * 200 }
        let input = directory.write("long.mp4", movie.build())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = [input, "-"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let first = out.fileHandleForReading.readData(ofLength: 4096)
        XCTAssertEqual(first.count, 4096, "the stream had started")
        try out.fileHandleForReading.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 74, stderr)
        XCTAssertTrue(stderr.contains("cannot write to standard output after"), stderr)
        XCTAssertEqual(stderr.filter { $0 == "\n" }.count, 1, "one line: \(stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("-")))
    }

    func testASignalWhileSpoolingRemovesTheSpool() throws {
        let spool = directory.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: false)
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = spool
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = ["-", directory.file("o.m4a")]
        process.environment = environment
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        pipe.fileHandleForWriting.write(Data(readFile(fixture("aac-h264-faststart.mp4")).prefix(1000)))
        let deadline = Date().addingTimeInterval(20)
        while (try FileManager.default.contentsOfDirectory(atPath: spool)).isEmpty && Date() < deadline { usleep(2000) }
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty, "spooling never began")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool), [])
    }

    // MARK: 12: messages

    func testMessagesNameTheFileAndCallAnEmptyFileEmpty() throws {
        let empty = directory.write("empty.mp4", [])
        let result = try run([empty, directory.file("o.m4a")])
        XCTAssertEqual(result.status, 65, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(empty) is empty"), result.stderr)

        var corrupt = SyntheticMovie()
        corrupt.sampleToChunk.entries[0].firstChunk = 0
        let bad = directory.write("corrupt.mp4", corrupt.build())
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let batch = try run([good, bad, "-o", directory.file("out")])
        XCTAssertTrue(batch.stderr.contains("error: \(bad): moov/trak[1]"), batch.stderr)

        // mux says which input is at fault, and what a non-MP4 input looks like.
        let video = fixture("aac-h264-faststart.mp4")
        let wav = directory.write("song.wav", Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVEfmt ".utf8)
                                  + [UInt8](repeating: 0, count: 40))
        let clip = try run(["mux", video, "--audio", fixture("meta-itunes.m4a"), "--audio", wav,
                            directory.file("m.mp4")])
        XCTAssertEqual(clip.status, 65, clip.stderr)
        XCTAssertTrue(clip.stderr.contains("music clip 2 (\(wav))"), clip.stderr)
        XCTAssertTrue(clip.stderr.contains("WAV"), clip.stderr)
        let notVideo = try run(["mux", wav, "--audio", fixture("meta-itunes.m4a"), directory.file("m.mp4")])
        XCTAssertEqual(notVideo.status, 65, notVideo.stderr)
        XCTAssertTrue(notVideo.stderr.contains("the video (\(wav))"), notVideo.stderr)
        XCTAssertTrue(notVideo.stderr.contains("WAV"), notVideo.stderr)
        let emptyClip = try run(["mux", video, "--audio", empty, directory.file("m.mp4")])
        XCTAssertTrue(emptyClip.stderr.contains("\(empty) is empty"), emptyClip.stderr)
    }

    // MARK: 13: options per command

    func testOptionsThatDoNotApplyAreRejected() throws {
        let video = fixture("aac-h264-faststart.mp4")
        let clip = fixture("meta-itunes.m4a")
        for arguments in [["mux", "--track", "1", video, "--audio", clip, directory.file("m.mp4")],
                          ["mux", "-o", directory.path, video, "--audio", clip, directory.file("m.mp4")],
                          ["mux", "--salvage", video, "--audio", clip, directory.file("m.mp4")],
                          ["probe", "--overwrite", video],
                          ["probe", "--track", "0", video],
                          ["--list", "--quiet", video],
                          ["--loop", video, directory.file("o.m4a")],
                          ["--skip-existing", "--overwrite", video, "-o", directory.path]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("extract-audio: error: "), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("m.mp4")))
        let late = try run(["mux", video, "--audio", clip, "--offset", "1000", directory.file("m.mp4")])
        XCTAssertEqual(late.status, 64, late.stderr)
        XCTAssertTrue(late.stderr.contains("after the video ends"), late.stderr)
        let help = try run(["help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.text.contains("Usage:"), help.text)
    }

    // MARK: 14: quiet, progress bar, reruns, output folder

    func testQuietKeepsWarningsAndHelpSaysSo() throws {
        let truncated = fixture("aac-h264-faststart-truncated.mp4")
        let result = try run(["--quiet", "--salvage", truncated, directory.file("s.m4a")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.count, 0)
        XCTAssertTrue(result.stderr.contains("warning: \(truncated) is truncated"), result.stderr)
        let help = try run(["--help"])
        XCTAssertTrue(help.text.contains("warnings (something dropped, repaired or salvaged) still print"), help.text)
        XCTAssertTrue(help.text.contains("--skip-existing"), help.text)
        // Batch with --quiet: no summary.
        let good = directory.write("good.mp4", SyntheticMovie().build())
        let batch = try run(["-q", good, good, "-o", directory.file("q")])
        XCTAssertEqual(batch.status, 0, batch.stderr)
        XCTAssertEqual(batch.stderr, "")
    }

    func testTheProgressBarNeverWraps() {
        let label = "/a/very/long/path/" + String(repeating: "long-name-", count: 20) + "日本語.mp4"
        for columns in [20, 40, 80, 200] {
            let line = ProgressBar.line(label: label, fraction: 0.5, bytesPerSecond: 12_345_678, secondsLeft: 3,
                                        columns: columns)
            XCTAssertLessThan(ProgressBar.displayWidth(line), columns, "\(columns): \(line)")
            XCTAssertTrue(line.contains("50%"), line)
        }
        XCTAssertTrue(ProgressBar.line(label: "x.mp4", fraction: 1, bytesPerSecond: 1e6, secondsLeft: 0, columns: 80)
            .hasPrefix("x.mp4 ["))
    }

    func testSkipExistingAndAMissingOutputDirectory() throws {
        let first = directory.write("first.mp4", SyntheticMovie().build())
        let second = directory.write("second.mp4", SyntheticMovie(sampleCount: 4).build())
        let out = directory.file("new/folder")
        let created = try run([first, "-o", out])
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), ["first.m4a"])
        let before = readFile(out + "/first.m4a")
        let rerun = try run(["--skip-existing", first, second, "-o", out])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("1 of 2 extracted, 1 skipped"), rerun.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["first.m4a", "second.m4a"])
        XCTAssertEqual(readFile(out + "/first.m4a"), before)
        let blocked = directory.write("file", [1])
        let cannot = try run([first, "-o", blocked + "/sub"])
        XCTAssertEqual(cannot.status, 73, cannot.stderr)
        XCTAssertTrue(cannot.stderr.contains(blocked + "/sub"), cannot.stderr)
    }
}
