import Foundation
import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// The file sink performs the writer's operations exactly as the in-memory sink does, on
/// both of its paths: small pieces gathered with pread, large copies in the kernel.
final class MovieFileSinkTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func testFileSinkWritesWhatTheMemorySinkWrites() throws {
        // A source of 5 MiB of varied bytes; samples of 1.5 MiB (kernel copies) and of a few
        // hundred bytes (gathered), in an order that makes copies jump around the source.
        var generator = SystemRandomNumberGenerator()
        let data = (0..<(5 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let sourcePath = directory.write("source.bin", data)
        var writer = MovieWriter()
        let video = try writer.addTrack(TrackDescription(.h264(avcC: [1], width: 16, height: 16)))
        let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        for (index, offset) in [3 << 20, 0, 1 << 20].enumerated() {
            try writer.append(Sample(offset: UInt64(offset), size: 3 << 19, decodeTime: 0, duration: 90_000,
                                     isSync: index == 0), from: 0, to: video)
        }
        for index in 0..<200 {
            try writer.append(Sample(offset: UInt64(4_800_000 + index * 997), size: 300 + UInt32(index % 5),
                                     decodeTime: 0, duration: 1024), from: 0, to: audio)
        }
        try writer.append([1, 2, 3], duration: 1024, to: audio)
        for layout in [MovieWriter.Layout.progressive, .fragmented(seconds: 1, segmentIndex: true)] {
            var memory = MemoryMovieSink(sources: [MemoryByteSource(data)])
            try writer.finish(layout, into: &memory)
            let output = directory.file("out.mp4")
            let sink = try MovieFileSink(destination: output, overwrite: true, sources: [InputFile(path: sourcePath)],
                                         bufferSize: 64 << 10)
            var target = sink
            var reports: [MuxProgress] = []
            try writer.finish(layout, into: &target, progress: { reports.append($0) })
            try sink.publish()
            let written = readFile(output)
            XCTAssertEqual(written.count, memory.bytes.count, "\(layout)")
            XCTAssertTrue(written == memory.bytes, "\(layout): the file differs from the in-memory output")
            XCTAssertEqual(reports.last?.bytesDone, UInt64(written.count))
            XCTAssertEqual(reports.last?.sampleBytesDone, reports.last?.sampleBytesTotal)
        }
        XCTAssertEqual(directory.contents, ["out.mp4", "source.bin"], "no temporary file left")
    }

    /// Samples appended as bytes can be spilled to a temporary file as they come: the writer
    /// then holds none of their bytes (every sample operation is a copy), the file written
    /// is byte for byte the one written from memory, and the temporary file has no name
    /// anywhere (it is unlinked when made).
    func testSpilledSamplesWriteTheSameFileAndHoldNoBytes() throws {
        let spillDirectory = directory.file("spill")
        XCTAssertEqual(mkdir(spillDirectory, 0o700), 0)
        let spill = try SpillFile(directory: spillDirectory)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spillDirectory), [], "unlinked at once")
        let sourcePath = directory.write("source.bin", (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var inMemory = MovieWriter()
        var spilled = MovieWriter()
        let entry = TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100, channelCount: 2))
        for writer in [0, 1] {
            _ = writer == 0 ? try inMemory.addTrack(entry) : try spilled.addTrack(entry)
            _ = writer == 0 ? try inMemory.addTrack(entry) : try spilled.addTrack(entry)
        }
        var store = spill
        for index in 0..<300 {
            let frame = (0..<(50 + index % 13)).map { UInt8(truncatingIfNeeded: $0 + index) }
            let track = UInt32(1 + index % 2)
            try inMemory.append(frame, duration: 1024, to: track)
            try spilled.append(frame, duration: 1024, to: track, spillingTo: &store, asSource: 1)
            if index % 3 == 0 {  // Samples from a source in between, as a mux has.
                let sample = Sample(offset: UInt64(index * 10), size: 10, decodeTime: 0, duration: 1024)
                try inMemory.append(sample, from: 0, to: track)
                try spilled.append(sample, from: 0, to: track)
            }
        }
        XCTAssertGreaterThan(spill.length, 15_000)
        var sampleWrites = 0
        try spilled.forEachOperation(.progressive) { operation, isSample in
            if case .write = operation, isSample { sampleWrites += 1 }
        }
        XCTAssertEqual(sampleWrites, 0, "every sample is copied from a source: none is held by the writer")
        for layout in [MovieWriter.Layout.progressive, .fragmented(seconds: 0.5)] {
            var memory = MemoryMovieSink(sources: [MemoryByteSource(readFile(sourcePath))])
            try inMemory.finish(layout, into: &memory)
            let output = directory.file("spilled.mp4")
            let sink = try MovieFileSink(destination: output, overwrite: true,
                                         sources: [InputFile(path: sourcePath), spill])
            var target = sink
            try spilled.finish(layout, into: &target)
            try sink.publish()
            XCTAssertTrue(readFile(output) == memory.bytes, "\(layout): the spilled file differs")
        }
    }

    func testCopyPastTheSourceEndIsAnError() throws {
        let sourcePath = directory.write("short.bin", [UInt8](repeating: 7, count: 100))
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        try writer.append(Sample(offset: 50, size: 100, decodeTime: 0, duration: 1024), from: 0, to: track)
        let sink = try MovieFileSink(destination: directory.file("out.mp4"), overwrite: false,
                                     sources: [InputFile(path: sourcePath)])
        var target = sink
        XCTAssertThrowsError(try writer.finish(.progressive, into: &target)) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .ioError)
        }
    }

    func testCancellationStopsALargeKernelCopyBetweenPieces() throws {
        // One 4 MiB sample: a single copy operation, done in pieces of the 64 KiB buffer.
        let sourcePath = directory.write("large.bin", [UInt8](repeating: 9, count: 4 << 20))
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        try writer.append(Sample(offset: 0, size: 4 << 20, decodeTime: 0, duration: 1024), from: 0, to: track)
        let sink = try MovieFileSink(destination: directory.file("out.mp4"), overwrite: false,
                                     sources: [InputFile(path: sourcePath)], bufferSize: 64 << 10)
        var polls = 0
        sink.isCancelled = {
            polls += 1
            return polls > 3
        }
        var target = sink
        var copied: UInt64 = 0
        XCTAssertThrowsError(try writer.finish(.progressive, into: &target,
                                               progress: { copied = $0.sampleBytesDone })) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .cancelled)
        }
        XCTAssertEqual(polls, 4, "polled between the pieces of the one copy")
        XCTAssertEqual(copied, 0, "the copy operation did not complete")
    }
}
