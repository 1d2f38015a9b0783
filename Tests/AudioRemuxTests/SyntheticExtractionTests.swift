@testable import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Extraction of synthetic movies whose every field is known, checked by reading the
/// output back: packets, timing, layout and the rebuilt tables.
final class SyntheticExtractionTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func extract(_ synthetic: SyntheticMovie, options: ExtractionOptions = ExtractionOptions()) throws
        -> (result: ExtractionResult, output: DemuxedTrack, input: DemuxedTrack)
    {
        let bytes = synthetic.build()
        let input = directory.write("in-\(UUID().uuidString).mp4", bytes)
        let output = directory.file("out-\(UUID().uuidString).m4a")
        let result = try AudioExtractor.extract(from: input, to: output, options: options)
        return (result, try DemuxedTrack(path: output, bytes: readFile(output)), try DemuxedTrack(path: input, bytes: bytes))
    }

    func assertFails(_ code: RemuxError.Code, _ synthetic: SyntheticMovie, file: StaticString = #filePath,
                     line: UInt = #line) {
        let input = directory.write("bad-\(UUID().uuidString).mp4", synthetic.build())
        let output = directory.file("bad.m4a")
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: output), file: file, line: line) { error in
            XCTAssertEqual((error as? RemuxError)?.code, code, "\(error)", file: file, line: line)
        }
        XCTAssertFalse(directory.contents.contains { $0.hasSuffix(".m4a") || $0.hasSuffix(".tmp") },
                       "output or temporary file left: \(directory.contents)", file: file, line: line)
    }

    func testPacketsAndTimingAreCopiedExactly() throws {
        let (result, output, input) = try extract(SyntheticMovie())
        XCTAssertEqual(output.packets, input.packets)
        XCTAssertEqual(result.sampleCount, 10)
        XCTAssertEqual(result.codec, "mp4a.40.2")
        XCTAssertEqual(result.sampleRate, 44100)
        XCTAssertEqual(result.channelCount, 2)
        XCTAssertEqual(output.track.editList, input.track.editList)
        XCTAssertEqual(output.track.mediaHeader, input.track.mediaHeader)
        XCTAssertEqual(output.table.boxes.timeToSample, input.table.boxes.timeToSample)
        XCTAssertEqual(output.table.boxes.sampleDescriptions.entries.map(\.bytes),
                       input.table.boxes.sampleDescriptions.entries.map(\.bytes), "ISO entry copied byte for byte")
    }

    func testMemoryToMemoryMatchesFileToFile() throws {
        let bytes = SyntheticMovie().build()
        var sink = MemoryByteSink()
        let result = try AudioExtractor.extract(from: MemoryByteSource(bytes), to: &sink)
        XCTAssertEqual(UInt64(sink.data.count), result.bytesWritten)
        let input = directory.write("mem.mp4", bytes)
        _ = try AudioExtractor.extract(from: input, to: directory.file("mem.m4a"))
        XCTAssertEqual(sink.data, readFile(directory.file("mem.m4a")))
    }

    func testOutputLayoutIsFaststartM4AWithOneTrack() throws {
        let (result, output, _) = try extract(SyntheticMovie())
        let movie = output.movie
        XCTAssertEqual(movie.fileType?.majorBrand, .m4a)
        XCTAssertEqual(movie.fileType?.compatibleBrands, [.m4a, .mp42, .isom])
        XCTAssertEqual(movie.tracks.count, 1)
        XCTAssertEqual(movie.tracks[0].trackID, 1)
        XCTAssertEqual(movie.header.nextTrackID, 2)
        XCTAssertEqual(movie.mediaDataRanges.count, 1)
        XCTAssertEqual(movie.movieBoxRange.lowerBound, 28, "moov right after ftyp")
        XCTAssertEqual(movie.movieBoxRange.upperBound, movie.mediaDataRanges[0].lowerBound, "mdat right after moov")
        XCTAssertEqual(movie.mediaDataRanges[0].upperBound, result.bytesWritten)
        XCTAssertEqual(output.table.boxes.sampleToChunk.entries,
                       [.init(firstChunk: 1, samplesPerChunk: 10, sampleDescriptionIndex: 1)], "one chunk")
    }

    func testAACRollGroupIsAddedAsFFmpegDoes() throws {
        let (_, output, _) = try extract(SyntheticMovie())
        XCTAssertEqual(output.table.boxes.sampleGroupDescriptions, [.aacRoll])
        XCTAssertEqual(output.table.boxes.sampleToGroups,
                       [SampleToGroupBox(groupingType: .roll, entries: [.init(sampleCount: 10, groupDescriptionIndex: 1)])])
    }

    func testExistingRollGroupIsKept() throws {
        var synthetic = SyntheticMovie()
        let roll = SampleGroupDescriptionBox(version: 1, groupingType: .roll, defaultLength: 2, entries: [[0xFF, 0xFE]])
        let group = SampleToGroupBox(groupingType: .roll, entries: [.init(sampleCount: 10, groupDescriptionIndex: 1)])
        synthetic.extraSampleTableBoxes = [roll.serialized, group.serialized]
        let (_, output, _) = try extract(synthetic)
        XCTAssertEqual(output.table.boxes.sampleGroupDescriptions, [roll])
        XCTAssertEqual(output.table.boxes.sampleToGroups, [group])
    }

    func testScatteredChunksAreGatheredInSampleOrder() throws {
        var synthetic = SyntheticMovie(sampleCount: 7)
        synthetic.sampleToChunk = SampleToChunkBox(entries: [
            .init(firstChunk: 1, samplesPerChunk: 3, sampleDescriptionIndex: 1),
            .init(firstChunk: 2, samplesPerChunk: 1, sampleDescriptionIndex: 1),
        ])
        // Chunks stored out of order, with gaps: [s0 s1 s2] at 500, s3 at 0, s4 at 200, ...
        let sizes = synthetic.sampleSizes.map(UInt64.init)
        synthetic.chunkOffsets = [sizes[3] + sizes[4] + sizes[5] + sizes[6], 0, sizes[3], sizes[3] + sizes[4],
                                  sizes[3] + sizes[4] + sizes[5]]
        var data: [UInt8] = []
        for i in [3, 4, 5, 6, 0, 1, 2] { data += [UInt8](repeating: UInt8(i), count: Int(sizes[i])) }
        let input = directory.write("scattered.mp4", rebuild(synthetic, mediaData: data))
        let output = directory.file("scattered.m4a")
        _ = try AudioExtractor.extract(from: input, to: output)
        let demuxed = try DemuxedTrack(path: output, bytes: readFile(output))
        XCTAssertEqual(demuxed.packets.map(\.crc),
                       (0..<7).map { crc32([UInt8](repeating: UInt8($0), count: Int(sizes[$0]))) })
    }

    /// `synthetic` with its mdat payload replaced (same length).
    func rebuild(_ synthetic: SyntheticMovie, mediaData: [UInt8]) -> [UInt8] {
        let bytes = synthetic.build()
        return Array(bytes[..<(bytes.count - mediaData.count)]) + mediaData
    }

    func testSeveralSampleEntriesKeepTheirChunks() throws {
        var synthetic = SyntheticMovie()
        let mono = AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 1, sampleRate: 44100,
                                             children: [SyntheticMovie.esds(objectType: 0x40, config: [0x12, 0x08])])
        synthetic.sampleEntries = [SyntheticMovie.aacEntry, mono]
        synthetic.sampleToChunk = SampleToChunkBox(entries: [
            .init(firstChunk: 1, samplesPerChunk: 2, sampleDescriptionIndex: 1),
            .init(firstChunk: 3, samplesPerChunk: 2, sampleDescriptionIndex: 2),
        ])
        let (_, output, input) = try extract(synthetic)
        XCTAssertEqual(output.packets, input.packets)
        XCTAssertEqual(output.table.boxes.sampleDescriptions.entries.map(\.bytes), synthetic.sampleEntries)
        XCTAssertEqual(output.table.boxes.sampleToChunk.entries, [
            .init(firstChunk: 1, samplesPerChunk: 4, sampleDescriptionIndex: 1),
            .init(firstChunk: 2, samplesPerChunk: 6, sampleDescriptionIndex: 2),
        ])
    }

    func testQuickTimeSoundDescriptionIsRewrittenAsISOEntry() throws {
        var synthetic = SyntheticMovie()
        synthetic.fileType = FileTypeBox(majorBrand: .quickTime, minorVersion: 0x200, compatibleBrands: [.quickTime])
        let esds = SyntheticMovie.esds(objectType: 0x40, config: [0x11, 0x90])  // AAC LC, 48 kHz, stereo
        var wave = BoxWriter()
        wave.box(.wave) { w in
            w.box(.frma) { $0.write(FourCC.mp4a) }
            w.write(bytes: esds)
            w.writeZeros(8)
        }
        var entry = BoxWriter()
        entry.box(.mp4a) { e in
            e.writeZeros(6)
            e.write(UInt16(1))
            e.write(UInt16(1))  // version 1
            e.writeZeros(6)
            e.write(UInt16(2))
            e.write(UInt16(16))
            e.write(UInt16(0xFFFE))
            e.writeZeros(2)
            e.write(UInt32(44100) << 16)  // wrong on purpose: the AudioSpecificConfig says 48 kHz
            e.write(UInt32(1024))
            e.writeZeros(12)
            e.write(bytes: wave.bytes)
        }
        synthetic.sampleEntries = [entry.bytes]
        let (result, output, input) = try extract(synthetic)
        XCTAssertEqual(output.packets, input.packets)
        XCTAssertEqual(result.sampleRate, 48000)
        XCTAssertEqual(output.table.boxes.sampleDescriptions.entries.map(\.bytes),
                       [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 48000, children: [esds])])
    }

    func testLargeOffsetsUseCo64AndA64BitMdat() throws {
        // Plan only: a 5 GiB track cannot be written in a unit test, but its moov can.
        var synthetic = SyntheticMovie(sampleCount: 6)
        synthetic.sampleSizes = [UInt32](repeating: 1 << 30, count: 6)
        synthetic.absoluteChunkOffsets = true
        synthetic.useLargeChunkOffsets = true
        synthetic.chunkOffsets = [1 << 20, (1 << 20) + (2 << 30), (1 << 20) + (4 << 30)]
        synthetic.omitMediaData = true
        let movieBytes = synthetic.build()
        let movie = try Movie(reading: MemoryByteSource(movieBytes))
        let table = try SampleTable(boxes: movie.tracks[0].sampleTable(), fileLength: 7 << 30)
        let planned = try ExtractedMovie(movie: movie, track: movie.tracks[0], table: table,
                                         entries: [SyntheticMovie.aacEntry], entryIndex: [1: 1], codec: .aac,
                                         mediaDuration: movie.tracks[0].mediaHeader.duration)
        // What the writer writes before the first sample: ftyp, moov and the mdat header.
        var head: [UInt8] = []
        var payload: UInt64 = 0
        try planned.writer.forEachOperation(.progressive) { operation, isSample in
            switch operation {
            case .write(let bytes) where !isSample: head += bytes
            default: payload += operation.byteCount
            }
        }
        XCTAssertEqual(payload, 6 << 30)
        let output = try Movie(reading: MemoryByteSource(head))
        let boxes = try output.tracks[0].sampleTable()
        XCTAssertNotNil(boxes.locations[.co64])
        XCTAssertEqual(Array(head.suffix(16).prefix(8)), [0, 0, 0, 1] + Array("mdat".utf8), "a 64-bit mdat header")
        let dataStart = UInt64(head.count)
        XCTAssertEqual(boxes.chunkOffsets.offsets, (0..<6).map { dataStart + UInt64($0) << 30 })
    }

    func testChunksAreAtMostOneMebibyte() throws {
        var synthetic = SyntheticMovie(sampleCount: 40)
        synthetic.sampleSizes = [UInt32](repeating: 100_000, count: 40)
        let (_, output, input) = try extract(synthetic)
        XCTAssertEqual(output.packets, input.packets)
        XCTAssertEqual(output.table.boxes.sampleToChunk.entries,
                       [.init(firstChunk: 1, samplesPerChunk: 10, sampleDescriptionIndex: 1)], "10 × 100 kB per chunk")
        XCTAssertEqual(output.table.boxes.chunkOffsets.offsets.count, 4)
    }

    // MARK: Refusals

    func testNoAudioTrack() {
        var synthetic = SyntheticMovie()
        synthetic.handler = .vide
        assertFails(.noAudioTrack, synthetic)
    }

    func testAudioTrackIndexOutOfRange() {
        let input = directory.write("one.mp4", SyntheticMovie().build())
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("x.m4a"),
                                                        options: ExtractionOptions(track: .audioIndex(1)))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .noAudioTrack)
            XCTAssertTrue("\($0)".contains("has 1"), "\($0)")
        }
    }

    func testUnsupportedCodecs() {
        var pcm = SyntheticMovie()
        pcm.sampleEntries = [AudioSampleEntry.isoEntry(format: "sowt", channelCount: 2, sampleRate: 44100, children: [])]
        assertFails(.unsupportedCodec, pcm)
        var visual = SyntheticMovie()
        visual.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                          children: [SyntheticMovie.esds(objectType: 0x20, config: [])])]
        assertFails(.unsupportedCodec, visual)
        var unknown = SyntheticMovie()
        unknown.sampleEntries = [AudioSampleEntry.isoEntry(format: "samr", channelCount: 1, sampleRate: 8000,
                                                           children: [])]
        assertFails(.unsupportedCodec, unknown)
        var encrypted = SyntheticMovie()
        encrypted.sampleEntries = [AudioSampleEntry.isoEntry(format: .enca, channelCount: 2, sampleRate: 44100,
                                                             children: [])]
        assertFails(.unsupportedInput, encrypted)
    }

    func testMalformedTablesAreRefusedBeforeWriting() {
        var synthetic = SyntheticMovie()
        synthetic.chunkOffsets[4] = 1 << 30
        assertFails(.invalidInput, synthetic)
        var badConfig = SyntheticMovie()
        badConfig.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [SyntheticMovie.esds(objectType: 0x40, config: [0xF8])])]
        assertFails(.invalidInput, badConfig)
    }

    func testFileThatIsNotAMovie() {
        let input = directory.write("noise.bin", [UInt8](repeating: 0xFF, count: 4096))
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("x.m4a"))) {
            XCTAssertNotNil(($0 as? RemuxError))
        }
        XCTAssertEqual(directory.contents, ["noise.bin"])
    }
}
