import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Faults around the tool: signals mid-copy, a shrinking input, a full disk, a read-only
/// destination, and several extractions racing. Nothing half-written may ever appear at a
/// destination.
final class FaultTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// An input whose copy takes a while: 400 000 samples of 64 bytes, each in its own
    /// chunk, stored back to front so no two chunks coalesce.
    static let slowInput: [UInt8] = {
        let count = 400_000
        var synthetic = SyntheticMovie(sampleCount: 0)
        synthetic.sampleSizes = [UInt32](repeating: 64, count: count)
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: UInt32(count), sampleDelta: 1024)])
        synthetic.sampleToChunk = SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: 1, sampleDescriptionIndex: 1)])
        synthetic.chunkOffsets = (0..<UInt64(count)).reversed().map { $0 * 64 }
        synthetic.editList = nil
        return synthetic.build()
    }()

    func start(_ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        if let environment { process.environment = environment }
        try process.run()
        return process
    }

    /// Waits until the temporary file of `output` exists (the copy has begun).
    func waitForTemporaryFile(of output: String, timeout: Double = 20) -> Bool {
        let prefix = "." + (output as NSString).lastPathComponent + ".extract-audio-"
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if directory.contents.contains(where: { $0.hasPrefix(prefix) }) { return true }
            usleep(2_000)
        }
        return false
    }

    func temporaryFiles() -> [String] { directory.contents.filter { $0.contains(".extract-audio-") } }

    func testSignalsMidCopyRemoveTheTemporaryFile() throws {
        let input = directory.write("slow.mp4", Self.slowInput)
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let output = directory.file("out-\(signal).m4a")
            let process = try start([input, output])
            XCTAssertTrue(waitForTemporaryFile(of: output), "the copy never started")
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, status, "signal \(signal)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
            XCTAssertEqual(temporaryFiles(), [], "signal \(signal)")
        }
    }

    /// `package`: SIGINT or SIGTERM once segments are in its temporary folder: exit 130/143 and nothing
    /// left, neither the folder nor a file of it (the handler used to leave the folder).
    func testSignalsMidPackageLeaveNoFolder() throws {
        let input = directory.write("slow.mp4", FaultTests.slowInput)
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let output = directory.file("out-\(signal)")
            let process = try start(["package", input, output, "--segment-duration", "1"])
            let prefix = ".out-\(signal).package-"
            var segments = 0
            let deadline = Date().addingTimeInterval(30)
            while segments < 3, Date() < deadline, process.isRunning {
                if let folder = directory.contents.first(where: { $0.hasPrefix(prefix) }) {
                    segments = ((try? FileManager.default.contentsOfDirectory(atPath: directory.file(folder))) ?? [])
                        .filter { $0.hasSuffix(".m4s") }.count
                }
                usleep(1000)
            }
            XCTAssertGreaterThanOrEqual(segments, 3, "segments were written before the signal")
            XCTAssertTrue(process.isRunning, "still packaging when the signal comes")
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, status, "signal \(signal)")
            XCTAssertEqual(directory.contents.filter { $0 != "slow.mp4" }, [], "signal \(signal)")
        }
    }

    func testSIGKILLLeavesNoDestinationAndALaterRunSucceeds() throws {
        let input = directory.write("slow.mp4", Self.slowInput)
        let output = directory.file("killed.m4a")
        let process = try start([input, output])
        XCTAssertTrue(waitForTemporaryFile(of: output))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "no destination after SIGKILL")
        let leftovers = temporaryFiles()
        XCTAssertTrue(leftovers.allSatisfy { $0.hasPrefix(".killed.m4a.extract-audio-") && $0.hasSuffix(".tmp") },
                      "only a recognisable temporary file may remain: \(leftovers)")
        let again = try start([input, output])
        again.waitUntilExit()
        XCTAssertEqual(again.terminationStatus, 0, "a later run is not confused by the leftover")
        XCTAssertEqual(try Movie(reading: MemoryByteSource(readFile(output))).tracks.count, 1)
    }

    func testInputShrinkingDuringTheCopyIsAnErrorNotAShortFile() throws {
        let input = directory.write("shrinking.mp4", Self.slowInput)
        let output = directory.file("short.m4a")
        let process = try start([input, output])
        XCTAssertTrue(waitForTemporaryFile(of: output))
        XCTAssertEqual(truncate(input, 100_000), 0)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 74)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(temporaryFiles(), [])
    }

    func testDiskFullIsAnErrorAndLeavesNothing() throws {
        let input = directory.write("big.mp4", SyntheticMovie(sampleCount: 4000).build())
        let output = directory.file("full.m4a")
        // RLIMIT_FSIZE of 64 KiB (ulimit -f counts 1 KiB blocks) stands in for a full disk.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -f 64; exec \"$0\" \"$@\"", CLITests.executable, input, output]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "must not die of SIGXFSZ")
        XCTAssertEqual(process.terminationStatus, 74, message)
        XCTAssertTrue(message.contains("cannot write"), message)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(temporaryFiles(), [])
    }

    func testReadOnlyDestinationDirectory() throws {
        let input = directory.write("in.mp4", SyntheticMovie().build())
        // sysfs is read-only even for root.
        let run = try runCLI([input, "/sys/extract-audio-test.m4a"])
        XCTAssertEqual(run.status, 73, run.stderr)
        XCTAssertTrue(run.stderr.contains("cannot"), run.stderr)
    }

    func testEightParallelExtractionsIntoOneDirectory() throws {
        let input = directory.write("in.mp4", SyntheticMovie(sampleCount: 3000).build())
        let processes = try (0..<8).map { try start([input, directory.file("parallel-\($0).m4a")]) }
        for process in processes { process.waitUntilExit() }
        XCTAssertEqual(processes.map(\.terminationStatus), [Int32](repeating: 0, count: 8))
        let first = readFile(directory.file("parallel-0.m4a"))
        for i in 1..<8 { XCTAssertEqual(readFile(directory.file("parallel-\(i).m4a")), first) }
        XCTAssertEqual(temporaryFiles(), [])
    }

    func testTwoExtractionsRacingForOneDestination() throws {
        let input = directory.write("in.mp4", Self.slowInput)
        let reference = directory.file("reference.m4a")
        let single = try start([input, reference])
        single.waitUntilExit()
        for round in 0..<3 {
            let output = directory.file("raced-\(round).m4a")
            let racers = try (0..<2).map { _ in try start([input, output]) }
            for racer in racers { racer.waitUntilExit() }
            XCTAssertEqual(racers.map(\.terminationStatus).sorted(), [0, 73], "exactly one publishes")
            XCTAssertEqual(readFile(output), readFile(reference), "the published file is complete")
            XCTAssertEqual(temporaryFiles(), [])
        }
    }
}
