import Foundation
@testable import ISOBMFF
import TestSupport
import XCTest

/// The writer: its new boxes byte for byte, the table builder, the interleaver's work, the
/// layouts, and its output read back by our parser and by ffprobe.
final class MovieWriterTests: XCTestCase {
    // MARK: Boxes

    func roundTrip<B: Box>(_ type: B.Type, _ hex: String, file: StaticString = #filePath,
                           line: UInt = #line) throws -> B {
        let bytes = hexBytes(hex)
        var reader = ByteReader(Array(bytes.dropFirst(8)), fileOffset: 8, path: "")
        let box = try B(parsing: &reader)
        XCTAssertEqual(box.serialized, bytes, "\(B.type) did not round-trip", file: file, line: line)
        return box
    }

    func testVideoMediaHeader() throws {
        let box = try roundTrip(VideoMediaHeaderBox.self, """
            00000014 766d6864 00000001 | size 20, 'vmhd', v0, flags 1
            0000 | graphics mode: copy
            0000 0000 0000 | opcolor
            """)
        XCTAssertEqual(box, VideoMediaHeaderBox())
    }

    func testMovieExtendsHeaderBothVersions() throws {
        let v0 = try roundTrip(MovieExtendsHeaderBox.self, """
            00000010 6d656864 00000000 | size 16, 'mehd', v0
            00000bb8 | fragment duration 3000
            """)
        XCTAssertEqual(v0, MovieExtendsHeaderBox(fragmentDuration: 3000))
        let v1 = try roundTrip(MovieExtendsHeaderBox.self, """
            00000014 6d656864 01000000 | size 20, 'mehd', v1
            0000000100000000 | fragment duration 2^32
            """)
        XCTAssertEqual(v1, MovieExtendsHeaderBox(fragmentDuration: 1 << 32))
    }

    func testMovieFragmentHeader() throws {
        let box = try roundTrip(MovieFragmentHeaderBox.self, """
            00000010 6d666864 00000000 | size 16, 'mfhd', v0
            00000007 | sequence number 7
            """)
        XCTAssertEqual(box, MovieFragmentHeaderBox(sequenceNumber: 7))
    }

    func testMediaHeaderBuiltFromScratch() throws {
        let built = MediaHeaderBox(timescale: 44_100, duration: 88_200, language: "eng")
        let parsed = try roundTrip(MediaHeaderBox.self, """
            00000020 6d646864 00000000 | size 32, 'mdhd', v0
            00000000 00000000 | creation, modification: unknown
            0000ac44 00015888 | timescale 44100, duration 88200
            15c7 0000 | language 'eng' (00101 01110 00111), quality
            """)
        XCTAssertEqual(built, parsed)
        XCTAssertEqual(MediaHeaderBox(timescale: 1, duration: 1 << 33).version, 1)
        XCTAssertEqual(MediaHeaderBox(timescale: 1, duration: 0, language: "EN").language, 0x55C4, "und")
    }

    func testHeaderTimesFlagsAndMediaDurationAreWritten() throws {
        try requireOracles(["ffprobe"])  // It reads the times back with ffprobe.
        var writer = MovieWriter(movieTimescale: 1000)
        writer.creationTime = 3_600_000_000
        writer.modificationTime = 3_600_000_001
        var description = TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                channelCount: 2))
        description.flags = TrackHeaderBox.inMovieFlag
        description.creationTime = 3_600_000_002
        description.modificationTime = 1 << 33
        description.mediaCreationTime = 3_600_000_004
        description.mediaModificationTime = 3_600_000_005
        description.mediaDuration = 1500
        let track = try writer.addTrack(description)
        for _ in 0..<2 { try writer.append([0x21, 0x10], duration: 1024, to: track) }
        var sink = MemoryMovieSink()
        try writer.finish(.progressive, into: &sink)
        let movie = try Movie(reading: MemoryByteSource(sink.bytes))
        XCTAssertEqual(movie.header.creationTime, 3_600_000_000)
        XCTAssertEqual(movie.header.modificationTime, 3_600_000_001)
        let header = movie.tracks[0].header
        XCTAssertFalse(header.isEnabled)
        XCTAssertEqual(header.flags, TrackHeaderBox.inMovieFlag)
        XCTAssertEqual(header.creationTime, 3_600_000_002)
        XCTAssertEqual(header.modificationTime, 1 << 33, "a time past 2^32 makes a version-1 tkhd")
        XCTAssertEqual(movie.tracks[0].mediaHeader.creationTime, 3_600_000_004)
        XCTAssertEqual(movie.tracks[0].mediaHeader.modificationTime, 3_600_000_005)
        XCTAssertEqual(movie.tracks[0].mediaHeader.duration, 1500, "the given mdhd duration, not the samples' 2048")
        // ffprobe reads the movie's creation time (seconds since 1904: 2018-01-28T16:00:00Z).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffprobe", "-v", "error", "-show_entries", "format_tags=creation_time",
                             "-of", "default=nw=1:nk=1", directory.write("times.mp4", sink.bytes)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let probe = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(probe.trimmingCharacters(in: .whitespacesAndNewlines), "2018-01-28T16:00:00.000000Z")
    }

    // MARK: Codec configurations

    func testAACEntryCarriesTheAudioSpecificConfig() throws {
        let entry = CodecConfiguration.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100, channelCount: 2)
            .sampleEntry
        let parsed = try AudioSampleEntry(parsing: .init(format: .mp4a, bytes: entry), quickTimeLayout: false)
        XCTAssertEqual(parsed.format, .mp4a)
        XCTAssertEqual(parsed.channelCount, 2)
        XCTAssertEqual(parsed.sampleRate, 44_100 << 16)
        XCTAssertEqual(parsed.elementaryStreamDescriptor?.objectTypeIndication, 0x40)
        XCTAssertEqual(parsed.elementaryStreamDescriptor?.streamType, 5)
        XCTAssertEqual(parsed.elementaryStreamDescriptor?.decoderSpecificInfo, [0x12, 0x10])
    }

    func testAC3Configuration() throws {
        let entry = CodecConfiguration.ac3(sampleRateCode: 0, bitStreamID: 8, bitStreamMode: 0, audioCodingMode: 7,
                                           lfeOn: true, bitRateCode: 14, sampleRate: 48_000, channelCount: 6)
            .sampleEntry
        let parsed = try AudioSampleEntry(parsing: .init(format: "ac-3", bytes: entry), quickTimeLayout: false)
        XCTAssertEqual(parsed.configurationBox("dac3"), hexBytes("""
            0000000b 64616333 | size 11, 'dac3'
            103dc0 | fscod 0, bsid 8, bsmod 0, acmod 7, lfeon 1, bit_rate_code 14, reserved
            """))
    }

    func testVisualEntryLayout() throws {
        let record: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF]
        let entry = CodecConfiguration.h264(avcC: record, width: 1920, height: 1080).sampleEntry
        XCTAssertEqual(entry.count, 86 + 8 + record.count)
        XCTAssertEqual(Array(entry[4..<8]), Array("avc1".utf8))
        XCTAssertEqual(Array(entry[32..<36]), [0x07, 0x80, 0x04, 0x38], "width 1920, height 1080")
        XCTAssertEqual(Array(entry[86..<94]), [0, 0, 0, 13] + Array("avcC".utf8))
        let description = TrackDescription(.h264(avcC: record, width: 1920, height: 1080))
        XCTAssertEqual(description.handler.handlerType, .vide)
        XCTAssertEqual(description.width, 1920 << 16)
        XCTAssertEqual(description.timescale, 90_000)
    }

    /// The fixture's first sample entry (made by FFmpeg) without its trailing `btrt` box,
    /// which the writer does not make: the 36 bytes of the entry, then its configuration box.
    func fixtureEntry(_ name: String) throws -> [UInt8] {
        let movie = try Movie(reading: MemoryByteSource(readFile(fixture(name))))
        var entry = try XCTUnwrap(movie.tracks.first?.sampleDescriptions.entries.first?.bytes)
        let configurationSize = Int(entry[36]) << 24 | Int(entry[37]) << 16 | Int(entry[38]) << 8 | Int(entry[39])
        entry = Array(entry[0..<(36 + configurationSize)])
        let size = UInt32(entry.count)
        entry.replaceSubrange(0..<4, with: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF),
                                            UInt8(size & 0xFF)])
        return entry
    }

    /// Entries built from scratch equal FFmpeg's, given the fields its encoders wrote.
    func testEntriesFromScratchEqualFFmpegs() throws {
        // dOps 00 02 0138 0000bb80 0000 00: version 0, 2 channels, pre-skip 312, 48 kHz input,
        // gain 0, mapping family 0.
        XCTAssertEqual(CodecConfiguration.opus(outputChannelCount: 2, preSkip: 312, inputSampleRate: 48_000)
            .sampleEntry, try fixtureEntry("codec-opus.mp4"))
        // dac3 101080: fscod 0 (48 kHz), bsid 8, bsmod 0, acmod 2 (stereo), no LFE, rate code 4.
        XCTAssertEqual(CodecConfiguration.ac3(sampleRateCode: 0, bitStreamID: 8, bitStreamMode: 0, audioCodingMode: 2,
                                              lfeOn: false, bitRateCode: 4, sampleRate: 48_000, channelCount: 2)
            .sampleEntry, try fixtureEntry("codec-ac3.mp4"))
        // FLAC and ALAC carry their configuration as opaque blocks: take them from the file.
        let flac = try fixtureEntry("codec-flac.mp4")
        XCTAssertEqual(CodecConfiguration.flac(metadataBlocks: Array(flac[48...]), sampleRate: 16_000, channelCount: 1,
                                               bitsPerSample: 16).sampleEntry, flac)
        let alac = try fixtureEntry("codec-alac.m4a")
        XCTAssertEqual(CodecConfiguration.alac(magicCookie: Array(alac[48...]), sampleRate: 16_000, channelCount: 1,
                                               bitDepth: 16).sampleEntry, alac)
    }

    /// A visual entry from scratch equals FFmpeg's but for the compressor name (FFmpeg
    /// writes its encoder's) and the `pasp`/`btrt` boxes after the configuration.
    func testVisualEntryFromScratchEqualsFFmpegs() throws {
        let movie = try Movie(reading: MemoryByteSource(readFile(fixture("aac-h264-faststart.mp4"))))
        let video = try XCTUnwrap(movie.tracks.first { $0.handlerType == .vide })
        let theirs = try XCTUnwrap(video.sampleDescriptions.entries.first?.bytes)
        let configurationSize = Int(theirs[88]) << 8 | Int(theirs[89])  // avcC's size: under 64 KiB.
        let record = Array(theirs[94..<(86 + configurationSize)])
        let ours = CodecConfiguration.h264(avcC: record, width: 160, height: 120).sampleEntry
        XCTAssertEqual(ours.count, 86 + configurationSize)
        XCTAssertEqual(Array(ours[4..<50]), Array(theirs[4..<50]), "format, reference index, size, resolution")
        XCTAssertEqual(Array(ours[82...]), Array(theirs[82..<(86 + configurationSize)]), "depth, pre_defined, avcC")
    }

    // MARK: The table builder

    func audioWriter(sizes: [UInt32], durations: [UInt32]? = nil) throws -> (MovieWriter, UInt32) {
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        var offset: UInt64 = 1000
        for (index, size) in sizes.enumerated() {
            try writer.append(Sample(offset: offset, size: size, decodeTime: 0, duration: durations?[index] ?? 1024),
                              from: 0, to: track)
            offset += UInt64(size)
        }
        return (writer, track)
    }

    func testTimingIsRunLengthCoded() throws {
        let (writer, track) = try audioWriter(sizes: [5, 5, 5, 5], durations: [1024, 1024, 1024, 512])
        let table = try XCTUnwrap(writer.table(of: track))
        XCTAssertEqual(table.timeToSample, [.init(sampleCount: 3, sampleDelta: 1024),
                                            .init(sampleCount: 1, sampleDelta: 512)])
        XCTAssertEqual(table.duration, 3584)
        XCTAssertNil(table.compositionOffsetBox)
        XCTAssertNil(table.syncSampleBox, "all sync: no stss")
        XCTAssertEqual(table.sampleSizeBox, SampleSizeBox(constantSize: 5, sampleCount: 4))
        XCTAssertTrue(table.sampleSizes.isEmpty, "constant sizes take no memory per sample")
    }

    func testVaryingSizesAndSyncSamples() throws {
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.h264(avcC: [1], width: 16, height: 16)))
        let flags = [true, false, false, true, false]
        let offsets: [Int64] = [0, 0, 2, -1, -1]
        for index in 0..<5 {
            try writer.append([UInt8](repeating: 7, count: index == 2 ? 9 : 4), duration: 3000,
                              compositionOffset: offsets[index], isSync: flags[index], to: track)
        }
        let table = try XCTUnwrap(writer.table(of: track))
        XCTAssertEqual(table.syncSampleBox?.sampleNumbers, [1, 4])
        XCTAssertEqual(table.sampleSizeBox, SampleSizeBox(sizes: [4, 4, 9, 4, 4]))
        let ctts = try XCTUnwrap(table.compositionOffsetBox)
        XCTAssertEqual(ctts.version, 1, "a negative offset needs the signed version")
        XCTAssertEqual(ctts.entries, [.init(sampleCount: 2, sampleOffset: 0), .init(sampleCount: 1, sampleOffset: 2),
                                      .init(sampleCount: 2, sampleOffset: UInt32(bitPattern: -1))])
    }

    /// Issue 20, point 2: a compressed track whose packets all have one size (CBR Opus)
    /// was written with `stsz`'s constant form, of which GStreamer 1.22 plays 13.5 ms a
    /// second. Only uncompressed audio, whose samples are frames, keeps that form; the
    /// planned layout counts the listed sizes (its moov size is the written one).
    func testOnlyUncompressedAudioStatesOneSizeForAllSamples() throws {
        let pcm = TrackDescription(handler: HandlerBox(handlerType: .soun, name: "SoundHandler"), timescale: 48_000,
                                   sampleEntries: [AudioSampleEntry.isoEntry(format: "sowt", channelCount: 2,
                                                                             sampleRate: 48_000, children: [])],
                                   mediaInformationHeader: SoundMediaHeaderBox().serialized)
        let descriptions: [(String, TrackDescription, Bool)] = [
            ("Opus", TrackDescription(.opus(outputChannelCount: 1, preSkip: 312, inputSampleRate: 48_000)), false),
            ("AAC", TrackDescription(.aac(audioSpecificConfig: [0x11, 0x88], sampleRate: 48_000, channelCount: 1)),
             false),
            ("H.264", TrackDescription(.h264(avcC: [1], width: 16, height: 16)), false),
            ("sowt", pcm, true),
        ]
        XCTAssertEqual(descriptions.map(\.1.allowsConstantSampleSize), descriptions.map(\.2))
        for (name, description, isConstant) in descriptions {
            var writer = MovieWriter()
            let track = try writer.addTrack(description)
            for _ in 0..<50 { try writer.append([UInt8](repeating: 0xFC, count: 160), duration: 960, to: track) }
            let layout = writer.progressiveLayout()
            var sink = MemoryMovieSink()
            try writer.finish(.progressive, into: &sink)
            XCTAssertEqual(UInt64(sink.bytes.count), layout.fileSize, name)
            let movie = try Movie(reading: MemoryByteSource(sink.bytes))
            let sizes = try movie.tracks[0].sampleTable().sampleSizes
            XCTAssertEqual(sizes.sampleCount, 50, name)
            XCTAssertEqual(sizes.constantSize, isConstant ? 160 : 0, name)
            XCTAssertEqual(sizes.sizes, isConstant ? [] : Array(repeating: 160, count: 50), name)
        }
    }

    /// Samples all of size 0 cannot be written as a constant size (0 means "sizes follow"):
    /// the structured fuzzer's mux of a clip of 32 empty packets wrote a 20-byte `stsz`
    /// claiming 32 entries, which no reader could parse.
    func testEmptySamplesGetATableNotAConstantSizeOfZero() throws {
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44100,
                                                              channelCount: 2)))
        for _ in 0..<3 { try writer.append([], duration: 1024, to: track) }
        let table = try XCTUnwrap(writer.table(of: track))
        XCTAssertEqual(table.sampleSizeBox.serialized, hexBytes("""
            00000020 7374737a 00000000 | size 32, 'stsz', v0
            00000000 00000003 | sizes follow, 3 samples
            00000000 00000000 00000000 | each of size 0
            """))
        XCTAssertEqual(SampleSizeBox(constantSize: 0, sampleCount: 2), SampleSizeBox(sizes: [0, 0]))
        var sink = MemoryMovieSink()
        try writer.finish(.progressive, into: &sink)
        let movie = try Movie(reading: MemoryByteSource(sink.bytes))
        let read = try SampleTable(boxes: movie.tracks[0].sampleTable(), fileLength: movie.fileLength,
                                   excluding: [movie.movieBoxRange])
        XCTAssertEqual(read.sampleCount, 3)
    }

    /// A checked table of 12 samples in 5 chunks: two sample entries, `stts` entries of one
    /// delta side by side and one of count 0, `ctts`, `stss`, sizes as given, chunks some
    /// contiguous (1–2, 4–5), one holding only an empty sample.
    func checkedTable(sizes: [UInt32]? = nil, listed: Bool = true, compositionOffsets: CompositionOffsetBox?,
                      syncSamples: SyncSampleBox?) throws -> SampleTable {
        let entry = CodecConfiguration.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                           channelCount: 2).sampleEntry
        let sizes = sizes ?? [10, 20, 30, 0, 5, 5, 7, 8, 9, 10, 11, 12]
        var offsets: [UInt64] = []
        var offset: UInt64 = 100
        for (index, samples) in [(0, 0..<3), (1, 3..<4), (2, 4..<6), (3, 6..<9), (4, 9..<12)] {
            if index == 2 || index == 3 { offset += 50 }  // gaps before chunks 3 and 4
            if index == 4 { offset += 0 }  // chunk 5 follows chunk 4
            offsets.append(offset)
            offset += samples.reduce(UInt64(0)) { $0 + UInt64(sizes[$1]) }
        }
        let boxes = SampleTableBoxes(
            sampleDescriptions: SampleDescriptionBox(entries: [.init(format: .mp4a, bytes: entry),
                                                               .init(format: .mp4a, bytes: entry)]),
            timeToSample: TimeToSampleBox(entries: [.init(sampleCount: 4, sampleDelta: 1024),
                                                    .init(sampleCount: 0, sampleDelta: 7),
                                                    .init(sampleCount: 3, sampleDelta: 1024),
                                                    .init(sampleCount: 5, sampleDelta: 960)]),
            compositionOffsets: compositionOffsets,
            sampleToChunk: SampleToChunkBox(entries: [
                .init(firstChunk: 1, samplesPerChunk: 3, sampleDescriptionIndex: 1),
                .init(firstChunk: 2, samplesPerChunk: 1, sampleDescriptionIndex: 1),
                .init(firstChunk: 3, samplesPerChunk: 2, sampleDescriptionIndex: 2),
                .init(firstChunk: 4, samplesPerChunk: 3, sampleDescriptionIndex: 2),
            ]),
            sampleSizes: listed ? SampleSizeBox(sizes: sizes) : SampleSizeBox(constantSize: sizes[0], sampleCount: 12),
            chunkOffsets: ChunkOffsetBox(offsets: offsets), syncSamples: syncSamples,
            sampleGroupDescriptions: [], sampleToGroups: [])
        return try SampleTable(boxes: boxes, fileLength: 1000)
    }

    /// A table appended whole (extraction's path: O(runs + chunks), its arrays shared) makes
    /// exactly the tables and the file that appending its samples one by one makes, in both
    /// layouts and after samples already appended (where it falls back to one by one).
    func testAppendingATableWholeEqualsAppendingItsSamples() throws {
        let entry = CodecConfiguration.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                           channelCount: 2).sampleEntry
        let unsigned = CompositionOffsetBox(version: 0, entries: [.init(sampleCount: 2, sampleOffset: 0),
                                                                  .init(sampleCount: 10, sampleOffset: 512)])
        let signed = CompositionOffsetBox(version: 1, entries: [.init(sampleCount: 3, sampleOffset: 0),
                                                                .init(sampleCount: 0, sampleOffset: 9),
                                                                .init(sampleCount: 4, sampleOffset: UInt32(bitPattern: -5)),
                                                                .init(sampleCount: 5, sampleOffset: 0)])
        let zeros = CompositionOffsetBox(version: 0, entries: [.init(sampleCount: 12, sampleOffset: 0)])
        let cases: [(String, SampleTable)] = [
            ("varying sizes, unsigned ctts, stss", try checkedTable(compositionOffsets: unsigned,
                                                                    syncSamples: SyncSampleBox(sampleNumbers: [1, 5, 9]))),
            ("signed ctts, stss listing every sample", try checkedTable(
                compositionOffsets: signed, syncSamples: SyncSampleBox(sampleNumbers: Array(1...12)))),
            ("zero ctts, no sync sample", try checkedTable(compositionOffsets: zeros,
                                                           syncSamples: SyncSampleBox(sampleNumbers: []))),
            ("constant size, none of them", try checkedTable(sizes: Array(repeating: 6, count: 12), listed: false,
                                                             compositionOffsets: nil, syncSamples: nil)),
            ("listed sizes all equal", try checkedTable(sizes: [UInt32](repeating: 4, count: 12),
                                                        compositionOffsets: nil, syncSamples: nil)),
        ]
        let source = MemoryByteSource((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for (name, table) in cases {
            for samplesBefore in [0, 2] {
                func written(whole: Bool) throws -> (MovieWriter, [UInt8], [UInt8]) {
                    var writer = MovieWriter()
                    let track = try writer.addTrack(TrackDescription(
                        handler: HandlerBox(handlerType: .soun, name: "SoundHandler"), timescale: 44_100,
                        sampleEntries: [entry, entry, entry], mediaInformationHeader: SoundMediaHeaderBox().serialized))
                    for index in 0..<samplesBefore {
                        try writer.append(Sample(offset: UInt64(900 + index), size: 1, decodeTime: 0, duration: 1),
                                          from: 0, to: track)
                    }
                    if whole {
                        try writer.append(contentsOf: table, from: 0, to: track) { $0 + 1 }
                    } else {
                        for sample in try SampleIndex(table: table) {
                            var copy = sample
                            copy.descriptionIndex += 1
                            try writer.append(copy, from: 0, to: track)
                        }
                    }
                    var progressive = MemoryMovieSink(sources: [source])
                    try writer.finish(.progressive, into: &progressive)
                    var fragmented = MemoryMovieSink(sources: [source])
                    try writer.finish(.fragmented(seconds: 0.05), into: &fragmented)
                    return (writer, progressive.bytes, fragmented.bytes)
                }
                let (whole, wholeFile, wholeFragments) = try written(whole: true)
                let (each, eachFile, eachFragments) = try written(whole: false)
                let label = "\(name), \(samplesBefore) samples before"
                let (a, b) = (try XCTUnwrap(whole.table(of: 1)), try XCTUnwrap(each.table(of: 1)))
                XCTAssertEqual(a.count, b.count, label)
                XCTAssertEqual(a.timeToSample, b.timeToSample, label)
                XCTAssertEqual(a.compositionOffsetBox, b.compositionOffsetBox, label)
                XCTAssertEqual(a.syncSampleBox, b.syncSampleBox, label)
                XCTAssertEqual(a.sampleSizeBox, b.sampleSizeBox, label)
                XCTAssertEqual(a.totalBytes, b.totalBytes, label)
                XCTAssertEqual(a.duration, b.duration, label)
                XCTAssertTrue(wholeFile == eachFile, "the progressive files differ: \(label)")
                XCTAssertTrue(wholeFragments == eachFragments, "the fragmented files differ: \(label)")
            }
        }
    }

    /// The interleaver cuts a track left alone in one step per chunk (`takeChunk`): the
    /// samples it takes and where the cursor stands after must be what stepping through them
    /// one by one gives, across timing, offset, description and sync runs.
    func testTakingAChunkAtOnceEqualsSteppingThroughIt() throws {
        var writer = MovieWriter()
        let entry = CodecConfiguration.h264(avcC: [1], width: 16, height: 16).sampleEntry
        var description = TrackDescription(.h264(avcC: [1], width: 16, height: 16))
        description.sampleEntries = [entry, entry]
        let track = try writer.addTrack(description)
        for index in 0..<500 {
            try writer.append(Sample(offset: UInt64(index) * 1000, size: UInt32(100 + index % 7 * 50), decodeTime: 0,
                                     compositionOffset: Int64(index % 3) * 1500, duration: index % 50 < 25 ? 3000 : 1500,
                                     isSync: index % 30 == 0, descriptionIndex: index < 260 ? 1 : 2),
                              from: 0, to: track)
        }
        let table = try XCTUnwrap(writer.table(of: track))
        for limit: UInt64 in [1, 999, 4096, 1 << 20] {
            var fast = table.makeCursor()
            var slow = table.makeCursor()
            var chunks = 0
            while let taken = fast.takeChunk(maximumBytes: limit) {
                chunks += 1
                var bytes: UInt64 = 0
                for _ in 0..<taken.count {
                    let entry = try XCTUnwrap(slow.next())
                    XCTAssertEqual(entry.descriptionIndex, taken.descriptionIndex)
                    bytes += UInt64(entry.size)
                }
                XCTAssertEqual(bytes, taken.bytes, "limit \(limit), chunk \(chunks)")
                XCTAssertTrue(taken.count == 1 || taken.bytes <= limit, "limit \(limit), chunk \(chunks)")
                if let next = slow.peek() {
                    XCTAssertTrue(next.descriptionIndex != taken.descriptionIndex || taken.bytes + UInt64(next.size) > limit,
                                  "the chunk stopped early: limit \(limit), chunk \(chunks)")
                }
                XCTAssertEqual(fast.index, slow.index)
                XCTAssertEqual(fast.decodeTime, slow.decodeTime)
                let (a, b) = (fast.peek(), slow.peek())
                XCTAssertEqual(a?.size, b?.size)
                XCTAssertEqual(a?.duration, b?.duration)
                XCTAssertEqual(a?.compositionOffset, b?.compositionOffset)
                XCTAssertEqual(a?.isSync, b?.isSync, "limit \(limit), at sample \(slow.index)")
                XCTAssertEqual(a?.descriptionIndex, b?.descriptionIndex)
            }
            XCTAssertNil(slow.peek())
            XCTAssertGreaterThan(chunks, limit < 1000 ? 100 : 1)
        }
    }

    func testContiguousSourceRangesBecomeOneCopy() throws {
        let (writer, _) = try audioWriter(sizes: Array(repeating: 100, count: 50))
        var operations: [MuxOperation] = []
        try writer.forEachOperation(.progressive) { operation, _ in operations.append(operation) }
        let copies = operations.filter { if case .copy = $0 { true } else { false } }
        XCTAssertEqual(copies, [.copy(source: 0, offset: 1000, count: 5000)])
    }

    func testStscIsRunLengthCoded() throws {
        // Interleaved with a video track: 0.5 s chunks of 1024-sample frames at 44.1 kHz,
        // 22 samples each (22 × 1024 ≥ 22050).
        var (writer, audio) = try audioWriter(sizes: Array(repeating: 10, count: 100))
        let video = try writer.addTrack(TrackDescription(.h264(avcC: [1], width: 16, height: 16)))
        // 30 frames of 0.1 s (90 kHz): the video lasts past the audio's 2.3 s.
        for index in 0..<30 {
            try writer.append(Sample(offset: 2000 + UInt64(index) * 10, size: 10, decodeTime: 0, duration: 9000),
                              from: 0, to: video)
        }
        var sink = MemoryMovieSink(sources: [MemoryByteSource([UInt8](repeating: 1, count: 3000))])
        try writer.finish(.progressive, into: &sink)
        let movie = try Movie(reading: MemoryByteSource(sink.bytes))
        XCTAssertEqual(movie.tracks[1].mediaHeader.timescale, 90_000)
        let boxes = try movie.tracks[Int(audio) - 1].sampleTable()
        XCTAssertEqual(boxes.sampleToChunk.entries, [
            .init(firstChunk: 1, samplesPerChunk: 22, sampleDescriptionIndex: 1),
            .init(firstChunk: 5, samplesPerChunk: 12, sampleDescriptionIndex: 1),
        ])
        XCTAssertEqual(boxes.chunkOffsets.offsets.count, 5)
    }

    /// The last track left is cut by bytes only (as extraction cuts its ≤ 1 MiB chunks): a
    /// structured-fuzzer video of ~900,000 samples each lasting longer than a chunk's 0.5 s
    /// took one chunk per sample, ~57 bytes of tables each in memory (issue 11, class 18).
    func testTheLastTrackLeftIsCutByBytesOnly() throws {
        let (writer, _) = try audioWriter(sizes: Array(repeating: 10, count: 1000),
                                          durations: Array(repeating: 44_100, count: 1000))
        let layout = writer.progressiveLayout()
        XCTAssertEqual(layout.chunkCount, 1, "1000 contiguous samples of 10 bytes, one second each: one chunk")
        let (big, _) = try audioWriter(sizes: Array(repeating: 1 << 19, count: 5))
        XCTAssertEqual(big.progressiveLayout().chunkCount, 3, "cut at 1 MiB: two samples of 512 KiB a chunk")
    }

    func testLargeOffsetsPastFourGiBArePlannedNotWritten() throws {
        let small = try audioWriter(sizes: [1 << 20, 1 << 20]).0.progressiveLayout()
        XCTAssertFalse(small.usesLargeOffsets)
        // Two samples of 3 GiB: the second chunk starts past 4 GiB. Nothing is written.
        let (writer, _) = try audioWriter(sizes: [0xC000_0000, 0xC000_0000])
        let large = writer.progressiveLayout()
        XCTAssertTrue(large.usesLargeOffsets)
        XCTAssertEqual(large.chunkCount, 2)
        // ftyp (32 bytes: 'isom', minor, four brands) + moov + a 16-byte mdat header (largesize).
        XCTAssertEqual(large.fileSize, 32 + UInt64(large.movieBoxSize) + 16 + 0x1_8000_0000)
        // co64 entries take 8 bytes where stco's take 4: the moov grew by 4 per chunk.
        var smallWriter = try audioWriter(sizes: [0x4000_0000, 0x4000_0000]).0
        smallWriter.chunkBytes = 1
        XCTAssertEqual(large.movieBoxSize - smallWriter.progressiveLayout().movieBoxSize, 2 * 4)
    }

    func testSampleGroupsPassThrough() throws {
        var (writer, track) = try audioWriter(sizes: [10, 10, 10])
        // AAC's roll group: every sample needs the one before it (roll distance -1).
        let roll = SampleGroupDescriptionBox(version: 1, groupingType: "roll", defaultLength: 2,
                                             entries: [[0xFF, 0xFF]])
        let assignment = SampleToGroupBox(groupingType: "roll",
                                          entries: [.init(sampleCount: 3, groupDescriptionIndex: 1)])
        try writer.setSampleGroups([roll], assignments: [assignment], for: track)
        var sink = MemoryMovieSink(sources: [MemoryByteSource([UInt8](repeating: 1, count: 2000))])
        try writer.finish(.progressive, into: &sink)
        let boxes = try Movie(reading: MemoryByteSource(sink.bytes)).tracks[0].sampleTable()
        XCTAssertEqual(boxes.sampleGroupDescriptions, [roll])
        XCTAssertEqual(boxes.sampleToGroups, [assignment])
    }

    // MARK: The interleaver

    func testInterleaverWorkIsBoundedBySamplesNotDurations() throws {
        var writer = MovieWriter()
        // A 600-byte-like video whose stts jumps by 10^8 seconds (timescale 10).
        let video = try writer.addTrack(TrackDescription(.h264(avcC: [1], width: 16, height: 16, timescale: 10)))
        for duration: UInt32 in [1, 1_000_000_000, 1] {
            try writer.append([0, 0, 0, 1], duration: duration, to: video)
        }
        let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        for _ in 0..<200 { try writer.append([0x21], duration: 1024, to: audio) }
        let layout = writer.progressiveLayout()
        // One step per sample plus at most log2(2) + 1 heap levels per chunk.
        XCTAssertLessThanOrEqual(layout.interleaverSteps, 3 * 203)
        XCTAssertGreaterThanOrEqual(layout.interleaverSteps, 203)
        var sink = MemoryMovieSink()
        try writer.finish(.progressive, into: &sink)
        XCTAssertEqual(UInt64(sink.bytes.count), layout.fileSize)
    }

    /// Chunks starting at one decode time go lowest data rate first, a track of samples
    /// lasting 0 ticks last: FFmpeg's stream probe (about 20 video frames) then meets an
    /// iPhone's timed metadata before a 0.5 s chunk of video, not after it.
    func testChunksStartingTogetherGoLowestRateFirst() throws {
        var writer = MovieWriter()
        let entry = CodecConfiguration.h264(avcC: [1], width: 16, height: 16)
        // Track 1, video: 1000 bytes a frame at 25 fps, 25,000 B/s.
        let video = try writer.addTrack(TrackDescription(entry))
        for _ in 0..<25 { try writer.append([UInt8](repeating: 1, count: 1000), duration: 3600, to: video) }
        // Track 2, samples lasting 0 ticks (GoPro's fdsc): no rate, last.
        let still = try writer.addTrack(TrackDescription(entry))
        for _ in 0..<3 { try writer.append([2, 2], duration: 0, to: still) }
        // Track 3, audio: 100 bytes a 1024-sample frame at 44.1 kHz, about 4,307 B/s.
        let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        for _ in 0..<43 { try writer.append([UInt8](repeating: 3, count: 100), duration: 1024, to: audio) }
        // Track 4, timed metadata: 10 bytes a frame at 25 fps, 250 B/s.
        let metadata = try writer.addTrack(TrackDescription(entry))
        for _ in 0..<25 { try writer.append([UInt8](repeating: 4, count: 10), duration: 3600, to: metadata) }
        let order = writer.progressivePlan().order.map(\.track)
        XCTAssertEqual(Array(order.prefix(4)), [metadata, audio, video, still].map { Int($0) - 1 },
                       "at decode time 0: 250, 4,307, 25,000 B/s, then the track lasting 0 ticks")
        // Decode time still comes first: the audio's second chunk starts at 22 × 1024 / 44,100
        // = 0.511 s, before the 13 frames (0.52 s) of the metadata's and video's.
        XCTAssertEqual(Array(order.dropFirst(4).prefix(3)), [audio, metadata, video].map { Int($0) - 1 })
    }

    func testCancellationStopsBetweenOperations() throws {
        let (writer, _) = try audioWriter(sizes: [10, 10])
        var sink = MemoryMovieSink(sources: [MemoryByteSource([UInt8](repeating: 1, count: 2000))])
        var calls = 0
        XCTAssertThrowsError(try writer.finish(.progressive, into: &sink, isCancelled: {
            calls += 1
            return calls > 2
        })) { XCTAssertTrue($0 is MuxCancelled) }
        XCTAssertEqual(sink.bytes.count, 32 + writer.progressiveLayout().movieBoxSize, "ftyp and moov, no more")
    }

    // MARK: Output read back

    /// A video track with B-frame-like timing and an audio track, each sample's bytes
    /// distinct, so misplaced bytes show.
    struct Made {
        var writer: MovieWriter
        /// Per track: (bytes, duration, composition offset, sync).
        var samples: [[([UInt8], UInt32, Int64, Bool)]]
    }

    func madeMovie() throws -> Made {
        var writer = MovieWriter()
        // A video entry of a coding FFmpeg does not know, so that ffprobe reports the key
        // flags from the file (its H.264 parser would take them from the made-up bytes).
        var entry = CodecConfiguration.h264(avcC: [1, 0x42, 0, 0x1E, 0xFF, 0xE0, 0], width: 64, height: 48).sampleEntry
        entry.replaceSubrange(4..<8, with: Array("zzzz".utf8))
        let video = try writer.addTrack(TrackDescription(handler: HandlerBox(handlerType: .vide, name: "VideoHandler"),
                                                         timescale: 90_000, sampleEntries: [entry],
                                                         mediaInformationHeader: VideoMediaHeaderBox().serialized))
        let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        var samples: [[([UInt8], UInt32, Int64, Bool)]] = [[], []]
        for index in 0..<75 {  // 3 s at 25 fps, a sync sample every 25.
            let bytes = (0..<(20 + index % 7)).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
            let sample = (bytes, UInt32(3600), Int64(index % 25 == 0 ? 3600 : (index % 2 == 0 ? 7200 : 0)),
                          index % 25 == 0)
            samples[0].append(sample)
            try writer.append(sample.0, duration: sample.1, compositionOffset: sample.2, isSync: sample.3, to: video)
        }
        for index in 0..<130 {
            let bytes = [UInt8(index), 0x21, 0x10, 0x04, 0x60, 0x8C, 0x1C]
            samples[1].append((bytes, 1024, 0, true))
            try writer.append(bytes, duration: 1024, to: audio)
        }
        return Made(writer: writer, samples: samples)
    }

    func readBack(_ bytes: [UInt8], _ made: Made, fragmented: Bool) throws {
        let source = MemoryByteSource(bytes)
        let movie = try Movie(reading: source)
        XCTAssertEqual(movie.isFragmented, fragmented)
        XCTAssertEqual(movie.tracks.count, 2)
        for (index, track) in movie.tracks.enumerated() {
            let boxes = fragmented ? try movie.fragmentedTrack(track, in: source).boxes : try track.sampleTable()
            let table = try SampleTable(boxes: boxes, fileLength: movie.fileLength)
            let expected = made.samples[index]
            XCTAssertEqual(table.sampleCount, expected.count)
            XCTAssertEqual(table.totalDuration, expected.reduce(0) { $0 + UInt64($1.1) })
            var data: [UInt8] = []
            table.forEachChunk { chunk in
                data += bytes[Int(chunk.offset)..<Int(chunk.offset + chunk.byteCount)]
                return true
            }
            XCTAssertEqual(data, expected.flatMap(\.0), "track \(index + 1): sample bytes")
        }
    }

    func testProgressiveOutputReadsBack() throws {
        let made = try madeMovie()
        var sink = MemoryMovieSink()
        try made.writer.finish(.progressive, into: &sink)
        try readBack(sink.bytes, made, fragmented: false)
        try checkWithFFprobe(sink.bytes, made)
    }

    /// A track without edits whose last frames are presented past its media's end
    /// (B-frames) gets one edit from media time 0 to where they end, as FFmpeg's muxer
    /// writes it: GStreamer 1.22 ends the default segment at the media duration and drops
    /// those frames (cml_bento4_frag_av.mp4 remuxed: 46 frames of 48).
    func testBFramesPresentedPastTheMediaEndGetAnEditToTheirEnd() throws {
        func written(offsets: [Int64], edits: [EditListBox.Entry]? = nil,
                     layout: MovieWriter.Layout = .progressive) throws -> Movie {
            var writer = MovieWriter(movieTimescale: 1000)
            let video = try writer.addTrack(TrackDescription(.h264(avcC: [1], width: 16, height: 16)))
            // Decode order I P B B, 3000 ticks of 90 kHz each (dts 0, 3000, 6000, 9000).
            for (index, offset) in offsets.enumerated() {
                try writer.append([UInt8(index)], duration: 3000, compositionOffset: offset, isSync: index == 0,
                                  to: video)
            }
            let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10],
                                                                 sampleRate: 44_100, channelCount: 2)))
            for _ in 0..<5 { try writer.append([0x21], duration: 1024, to: audio) }
            try writer.setEdits(edits, for: video)
            var sink = MemoryMovieSink()
            try writer.finish(layout, into: &sink)
            return try Movie(reading: MemoryByteSource(sink.bytes))
        }
        // Presented at 3000, 12000, 6000, 9000: the P-frame ends at 15000, past the media's 12000.
        let movie = try written(offsets: [3000, 9000, 0, 0])
        XCTAssertEqual(movie.tracks[0].editList?.entries, [.init(segmentDuration: 167, mediaTime: 0)],
                       "15000 / 90000 s in ms, rounded up")
        XCTAssertEqual(movie.tracks[0].header.duration, 167, "tkhd: the edit's duration")
        XCTAssertEqual(movie.tracks[0].mediaHeader.duration, 12000, "the media is unchanged")
        XCTAssertEqual(movie.header.duration, 167)
        XCTAssertNil(movie.tracks[1].editList, "audio presented within its media: no edit")
        // Presented no later than the media's end: no edit.
        XCTAssertNil(try written(offsets: [3000, 0, 0, 0]).tracks[0].editList)
        // The caller's edits are kept as given.
        let given = [EditListBox.Entry(segmentDuration: 100, mediaTime: 3000)]
        XCTAssertEqual(try written(offsets: [3000, 9000, 0, 0], edits: given).tracks[0].editList?.entries, given)
        // Negative offsets stay as they are (without edits there is no shift), and fragments
        // get none: their samples are not all known when the moov is written.
        XCTAssertNil(try written(offsets: [0, 6000, -3000, -3000]).tracks[0].editList)
        XCTAssertNil(try written(offsets: [3000, 9000, 0, 0], layout: .fragmented(seconds: 1)).tracks[0].editList)
    }

    func testPresentationEndIsTheLastFrameShownsEnd() throws {
        var table = SampleTableWriter()
        XCTAssertEqual(table.presentationEnd, 0, "no sample")
        for (duration, offset): (UInt32, Int64) in [(10, 20), (10, 0), (10, 0), (5, 40), (5, 0)] {
            try table.appendCoded(size: 1, duration: duration, compositionOffset: offset, isSync: true,
                                  descriptionIndex: 1)
        }
        // Ends: 0+20+10, 10+0+10, 20+0+10, 30+40+5, 35+0+5: the fourth, at 75.
        XCTAssertEqual(table.presentationEnd, 75)
        var plain = SampleTableWriter()
        for _ in 0..<3 {
            try plain.appendCoded(size: 1, duration: 7, compositionOffset: 0, isSync: true, descriptionIndex: 1)
        }
        XCTAssertEqual(plain.presentationEnd, 21, "without offsets: the media duration")
    }

    func testFragmentedOutputReadsBackAndProbes() throws {
        let made = try madeMovie()
        var sink = MemoryMovieSink()
        try made.writer.finish(.fragmented(seconds: 1), into: &sink)
        try readBack(sink.bytes, made, fragmented: true)
        let movie = try Movie(reading: MemoryByteSource(sink.bytes))
        XCTAssertEqual(try movie.fragmentedTrack(movie.tracks[0], in: MemoryByteSource(sink.bytes)).fragmentCount, 3,
                       "cut at the sync samples 1 s apart")
        try checkWithFFprobe(sink.bytes, made)
    }

    func testSegmentIndexReferencesEveryFragment() throws {
        let made = try madeMovie()
        var sink = MemoryMovieSink()
        try made.writer.finish(.fragmented(seconds: 1, segmentIndex: true), into: &sink)
        try readBack(sink.bytes, made, fragmented: true)
        try checkWithFFprobe(sink.bytes, made)
        // Find the sidx among the top-level boxes; its references must tile the rest of the file.
        var offset = 0
        var sidx: ArraySlice<UInt8>?
        while offset + 8 <= sink.bytes.count {
            let size = Int(sink.bytes[offset]) << 24 | Int(sink.bytes[offset + 1]) << 16
                | Int(sink.bytes[offset + 2]) << 8 | Int(sink.bytes[offset + 3])
            if String(decoding: sink.bytes[(offset + 4)..<(offset + 8)], as: UTF8.self) == "sidx" {
                sidx = sink.bytes[offset..<(offset + size)]
                offset += size
                break
            }
            offset += size
        }
        let index = Array(try XCTUnwrap(sidx))
        func field(_ at: Int) -> Int {
            Int(index[at]) << 24 | Int(index[at + 1]) << 16 | Int(index[at + 2]) << 8 | Int(index[at + 3])
        }
        // Header 8, version/flags 4, reference_ID 4, timescale 4, earliest 8, first_offset 8,
        // reserved 2, reference_count 2, then 12 bytes per reference.
        XCTAssertEqual(field(12), 1, "indexed by the video track")
        XCTAssertEqual(field(16), 90_000)
        let count = Int(index[38]) << 8 | Int(index[39])
        XCTAssertEqual(count, 3)
        let sizes = (0..<count).map { field(40 + 12 * $0) }
        XCTAssertEqual(sizes.reduce(0, +), sink.bytes.count - offset, "the references cover every moof and mdat")
        XCTAssertEqual((0..<count).map { field(44 + 12 * $0) }, [90_000, 90_000, 90_000])
        XCTAssertEqual((0..<count).map { field(48 + 12 * $0) }, [0x9000_0000, 0x9000_0000, 0x9000_0000],
                       "each starts with a sync sample")
    }

    func testStreamedFragmentsHoldOneFragmentAtATime() throws {
        let whole = try madeMovie()
        // The same samples, appended a second at a time and written out after each second.
        var writer = MovieWriter()
        var description = TrackDescription(copying: try Movie(reading: MemoryByteSource({
            var sink = MemoryMovieSink()
            try whole.writer.finish(.progressive, into: &sink)
            return sink.bytes
        }())).tracks[0])
        description.userData = nil
        let video = try writer.addTrack(description)
        let audio = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44_100,
                                                             channelCount: 2)))
        var sink = MemoryMovieSink()
        var audioIndex = 0
        for second in 0..<3 {
            for (data, duration, offset, sync) in whole.samples[0][(25 * second)..<(25 * second + 25)] {
                try writer.append(data, duration: duration, compositionOffset: offset, isSync: sync, to: video)
            }
            // Audio samples that start before the next second.
            while audioIndex < whole.samples[1].count,
                  audioIndex * 1024 < (second + 1) * 44_100 || second == 2 {
                try writer.append(whole.samples[1][audioIndex].0, duration: 1024, to: audio)
                audioIndex += 1
            }
            try writer.writeFragment(into: &sink)
            XCTAssertEqual(writer.table(of: video)?.count, 0, "the written samples are forgotten")
        }
        XCTAssertThrowsError(try writer.addTrack(description))
        try readBack(sink.bytes, whole, fragmented: true)
        try checkWithFFprobe(sink.bytes, whole)
    }

    /// ``MovieWriter/FragmentSizer`` gives the sizes of the fragment ``writeFragment(into:)``
    /// writes from the same samples (`moof` read from its size field, the whole fragment
    /// counted), over runs mixing equal and unequal durations, sizes and sync flags, empty
    /// samples (first, inside, last), zero, positive and negative composition offsets and
    /// a decode time past 2^32 (a 64-bit `tfdt`).
    func testFragmentSizerGivesTheWrittenSizes() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int) -> Int {  // A fixed LCG: the same runs every time.
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(seed >> 33) % bound
        }
        var checked = 0
        for trial in 0..<400 {
            var writer = MovieWriter()
            let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10],
                                                                  sampleRate: 44_100, channelCount: 2)))
            let firstDecodeTime: UInt64 = trial % 5 == 0 ? (1 << 32) + UInt64(random(1000)) : UInt64(random(1000))
            try writer.setFirstDecodeTime(firstDecodeTime, for: track)
            var sink = MemoryMovieSink()
            try writer.writeFragment(into: &sink)  // The init segment.
            var decodeTime = firstDecodeTime
            for _ in 0..<3 {
                var sizer = MovieWriter.FragmentSizer(decodeTime: decodeTime)
                let count = 1 + random(6)
                let sameSize = random(2) == 0, sameDuration = random(2) == 0, allSync = random(2) == 0
                let offsets = random(3)  // None, positive, or some negative.
                for _ in 0..<count {
                    let size = random(4) == 0 ? 0 : (sameSize ? 100 : 1 + random(3))
                    let duration = UInt32(sameDuration ? 1024 : 1000 + random(3))
                    let offset = offsets == 0 ? 0 : Int64(random(3)) * (offsets == 1 ? 512 : -512)
                    let sync = allSync || random(2) == 0
                    try writer.append(Array(repeating: 0xAB, count: size), duration: duration,
                                      compositionOffset: offset, isSync: sync, to: track)
                    sizer.add(Sample(offset: 0, size: UInt32(size), decodeTime: 0, compositionOffset: offset,
                                     duration: duration, isSync: sync, descriptionIndex: 1))
                    decodeTime += UInt64(duration)
                }
                let start = sink.bytes.count
                try writer.writeFragment(into: &sink)
                let fragment = Array(sink.bytes[start...])
                let moof = fragment.prefix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let sizes = sizer.sizes
                XCTAssertEqual(moof, sizes.movieFragment, "trial \(trial): moof")
                XCTAssertEqual(UInt64(fragment.count), sizes.movieFragment + sizes.mediaDataHeader + sizes.payload,
                               "trial \(trial): moof + mdat")
                checked += 1
            }
        }
        XCTAssertEqual(checked, 1200)
    }

    /// ffprobe's packets (edit lists ignored) equal the samples appended: decode and
    /// presentation times, sizes, key flags and CRC32 of the bytes.
    func checkWithFFprobe(_ bytes: [UInt8], _ made: Made, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let ffprobe = ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe", "/opt/homebrew/bin/ffprobe"]
            .first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw missingOracle("ffprobe")
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.write("out.mp4", bytes)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffprobe)
        process.arguments = ["-v", "error", "-ignore_editlist", "1", "-show_packets", "-show_data_hash", "CRC32",
                             "-show_entries", "packet=stream_index,pts,dts,size,flags,data_hash", "-of", "json", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, file: file, line: line)
        struct Probe: Decodable {
            struct Packet: Decodable {
                var stream_index: Int
                var pts: Int64
                var dts: Int64
                var size: String
                var flags: String
                var data_hash: String
            }
            var packets: [Packet]
        }
        let packets = try JSONDecoder().decode(Probe.self, from: output).packets
        for stream in 0..<2 {
            let got = packets.filter { $0.stream_index == stream }
            var decode: Int64 = 0
            var expected: [String] = []
            for (data, duration, offset, sync) in made.samples[stream] {
                expected.append("dts \(decode) pts \(decode + offset) size \(data.count) key \(sync) "
                                + "CRC32:\(String(format: "%08x", crc32(data)))")
                decode += Int64(duration)
            }
            XCTAssertEqual(got.map { "dts \($0.dts) pts \($0.pts) size \($0.size) key \($0.flags.hasPrefix("K")) "
                                     + $0.data_hash }, expected, "stream \(stream)", file: file, line: line)
        }
    }

    // MARK: Memory

    func testAppendingManySamplesKeepsTablesSmall() throws {
        var writer = MovieWriter()
        let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 48_000,
                                                             channelCount: 2)))
        #if DEBUG
        let count = 200_000
        #else
        let count = 1_700_000  // A 10-hour AAC track.
        #endif
        var offset: UInt64 = 0
        for index in 0..<count {
            let size = UInt32(300 + index % 64)
            try writer.append(Sample(offset: offset, size: size, decodeTime: 0, duration: 1024), from: 0, to: track)
            offset += UInt64(size)
        }
        let table = try XCTUnwrap(writer.table(of: track))
        XCTAssertEqual(table.timeToSample.count, 1)
        XCTAssertEqual(table.count, count)
        XCTAssertEqual(table.sampleSizes.count, count, "4 bytes a sample once sizes vary, as stsz itself")
    }
}
