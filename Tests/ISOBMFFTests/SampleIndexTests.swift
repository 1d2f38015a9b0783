import Foundation
@testable import ISOBMFF
import TestSupport
import XCTest

/// SampleIndex: random access, iteration and lookups over compressed tables, and what a
/// lookup costs.
final class SampleIndexTests: XCTestCase {
    /// Tables of `count` samples built in memory: durations alternating 1000/1001 (one
    /// `stts` run per sample, the worst case for the timing search), a B-frame composition
    /// pattern of period 3, chunks of 10 samples, sizes varying, a sync sample every 12th.
    static func table(count: Int) throws -> (SampleTable, sizes: [UInt32]) {
        var timing: [TimeToSampleBox.Entry] = []
        timing.reserveCapacity(count)
        for i in 0..<count { timing.append(.init(sampleCount: 1, sampleDelta: i % 2 == 0 ? 1000 : 1001)) }
        let pattern: [UInt32] = [2002, 0, 1001]
        let offsets = (0..<count).map { CompositionOffsetBox.Entry(sampleCount: 1, sampleOffset: pattern[$0 % 3]) }
        let sizes = (0..<count).map { UInt32(10 + $0 % 7) }
        var chunks: [UInt64] = []
        var position: UInt64 = 1000
        for (i, size) in sizes.enumerated() {
            if i % 10 == 0 { chunks.append(position) }
            position += UInt64(size)
        }
        let sync = stride(from: 1, through: count, by: 12).map { UInt32($0) }
        let entry = SampleDescriptionBox.Entry(format: "avc1", bytes: [0, 0, 0, 8] + Array("avc1".utf8))
        let boxes = SampleTableBoxes(
            sampleDescriptions: SampleDescriptionBox(entries: [entry]), timeToSample: TimeToSampleBox(entries: timing),
            compositionOffsets: CompositionOffsetBox(version: 0, entries: offsets),
            sampleToChunk: SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: 10, sampleDescriptionIndex: 1)]),
            sampleSizes: SampleSizeBox(sizes: sizes), chunkOffsets: ChunkOffsetBox(offsets: chunks),
            syncSamples: SyncSampleBox(sampleNumbers: sync), sampleGroupDescriptions: [], sampleToGroups: [])
        return (try SampleTable(boxes: boxes, fileLength: position), sizes)
    }

    /// `stss` and QuickTime's `stps` read as FFmpeg reads them: a table counting from 0 is
    /// shifted, and `stps` stays apart from the sync samples (a cut must not start at an
    /// open GOP's key frame whose leading pictures it presents). The fixtures
    /// `video-mpeg2-stps.mov` and `video-stss-zero-based.mp4` check the result against
    /// ffprobe's key flags; these are the edges.
    func testSyncTablesAsPlayersReadThem() {
        func read(_ stss: [UInt32]?, _ stps: [UInt32]?) -> [[UInt32]?] {
            let (sync, partial) = SyncSampleBox.asPlayersRead(stss.map(SyncSampleBox.init(sampleNumbers:)),
                                                              partial: stps.map(SyncSampleBox.init(sampleNumbers:)))
            return [sync?.sampleNumbers, partial?.sampleNumbers]
        }
        XCTAssertEqual(read(nil, [5, 9]), [nil, [5, 9]])
        XCTAssertEqual(read([1, 13], nil), [[1, 13], nil])
        XCTAssertEqual(read([1], [11, 23]), [[1], [11, 23]])
        XCTAssertEqual(read([0, 12, 24], nil), [[1, 13, 25], nil], "0-based")
        XCTAssertEqual(read([0], [0, 10]), [[1], [1, 11]], "0-based: both tables shifted")
        XCTAssertEqual(read([0, 12], [5]), [[0, 12], [5]], "stps's first entry is above 0: 1-based, as FFmpeg's key_off")
        XCTAssertEqual(read([0, UInt32.max], nil), [[1, 0], nil], "wraps to 0, which SampleTable refuses; no trap")
    }

    /// A time lookup on 1,000,000 samples costs O(log n) steps: binary-search probes plus,
    /// for a presentation time, the samples of the composition-offset window.
    func testTimeLookupsCostLogarithmicSteps() throws {
        let n = 1_000_000
        let (table, _) = try Self.table(count: n)
        let index = try SampleIndex(table: table)
        XCTAssertEqual(index.count, n)
        let log2n = Int(ceil(log2(Double(n))))  // 20
        // The window: offsets span 2002 ticks plus the longest duration 1001, about three samples.
        let window = 8
        var worstDecode = 0
        var worstPresent = 0
        var worstSync = 0
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let position = Int.random(in: 0..<n, using: &generator)
            let sample = index[position]
            var steps = 0
            XCTAssertEqual(index.index(decodingAt: sample.decodeTime, steps: &steps), position)
            worstDecode = max(worstDecode, steps)
            steps = 0
            let found = index.index(presentingAt: sample.presentationTime, steps: &steps)
            worstPresent = max(worstPresent, steps)
            XCTAssertEqual(found.map { index[$0].presentationTime }, sample.presentationTime, "sample \(position)")
            steps = 0
            let sync = index.syncIndex(atOrBefore: position, steps: &steps)
            worstSync = max(worstSync, steps)
            XCTAssertEqual(sync, position - position % 12)
        }
        XCTAssertLessThanOrEqual(worstDecode, log2n + 1, "decode-time lookup")
        XCTAssertLessThanOrEqual(worstPresent, 2 * (log2n + 1) + window, "presentation-time lookup")
        XCTAssertLessThanOrEqual(worstSync, log2n + 1, "sync lookup")
        // And not a scan: a linear search would take ~n/2 steps.
        XCTAssertLessThan(worstPresent, 200)
    }

    /// Random access, iteration from the start and from any position agree, and match the
    /// tables sample by sample (sizes and offsets computed here from the arrays built above).
    func testSubscriptIterationAndTablesAgree() throws {
        let (table, sizes) = try Self.table(count: 5000)
        let index = try SampleIndex(table: table)
        var offset: UInt64 = 1000
        var decode: UInt64 = 0
        for (i, sample) in index.enumerated() {
            XCTAssertEqual(sample.offset, offset, "sample \(i)")
            XCTAssertEqual(sample.size, sizes[i])
            XCTAssertEqual(sample.decodeTime, decode)
            XCTAssertEqual(sample.duration, i % 2 == 0 ? 1000 : 1001)
            XCTAssertEqual(sample.compositionOffset, [2002, 0, 1001][i % 3])
            XCTAssertEqual(sample.isSync, i % 12 == 0)
            XCTAssertEqual(index[i], sample)
            offset += UInt64(sizes[i])
            decode += UInt64(sample.duration)
        }
        XCTAssertEqual(index.endDecodeTime, decode)
        for start in [0, 1, 9, 10, 11, 4321, 4999] {
            var iterator = index.makeIterator(from: start)
            for i in start..<min(start + 25, index.count) { XCTAssertEqual(iterator.next(), index[i], "from \(start)") }
        }
        XCTAssertNil(index.index(decodingAt: decode))
        XCTAssertEqual(index.compositionOffsetRange, 0...2002)
    }

    /// A fragmented track's first decode time (its first tfdt) is the first sample's,
    /// as ffprobe prints it (Fixtures/frag-tfdt-start.mp4: 90000; stored expectation).
    func testFragmentedTrackStartsAtItsFirstDecodeTime() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("frag-tfdt-start.mp4"))))
        let samples = try reader.samples(of: try XCTUnwrap(reader.track(id: 2)))
        XCTAssertEqual(samples.firstDecodeTime, 90000)
        XCTAssertEqual(samples.first?.decodeTime, 90000)
        XCTAssertEqual(samples.index(decodingAt: 90000), 0)
        XCTAssertNil(samples.index(decodingAt: 89999))
    }

    /// Sample bytes read through the reader are the file's bytes at the sample's range.
    func testReadsSampleBytes() throws {
        let bytes = readFile(fixture("aac-h264-faststart.mp4"))
        let reader = try MovieReader(reading: MemoryByteSource(bytes))
        var buffer: [UInt8] = []
        for track in reader.tracks {
            for sample in try reader.samples(of: track).prefix(20) {
                try reader.read(sample, into: &buffer)
                XCTAssertEqual(buffer[...], bytes[Int(sample.offset)..<Int(sample.offset) + Int(sample.size)])
            }
        }
    }

    /// Typed sample descriptions: width and height as ffprobe reports them, the codec
    /// configuration box, rotation from the matrix.
    func testTypedSampleDescriptions() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("aac-h264-faststart.mp4"))))
        let video = try XCTUnwrap(reader.tracks.first { $0.kind == .video })
        let entry = try XCTUnwrap(video.sampleDescriptions.first?.video)
        // ffprobe -show_streams: width=160 height=120 codec_tag_string=avc1 (Fixtures/README.md).
        XCTAssertEqual([entry.width, entry.height], [160, 120])
        XCTAssertEqual(entry.format, "avc1")
        XCTAssertEqual(video.sampleDescriptions.first?.configuration?.type, "avcC")
        XCTAssertEqual(video.rotation, 0)
        let audio = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        XCTAssertEqual(audio.sampleDescriptions.first?.audio.map { $0.sampleRate >> 16 }, 44100)  // 16.16 fixed point.
        XCTAssertEqual(audio.sampleDescriptions.first?.configuration?.type, "esds")
        XCTAssertEqual(audio.language, "und")
        XCTAssertEqual(audio.timescale, 44100)
        // The entry writes back byte for byte.
        let raw = try XCTUnwrap(video.sampleDescriptions.first?.entry.bytes)
        var writer = BoxWriter()
        entry.write(to: &writer)
        XCTAssertEqual(writer.bytes, raw)
    }

    /// The average frame rate of a video track, as ffprobe's avg_frame_rate: 25/1 for
    /// video-bframes.mp4 and aac-h264-faststart.mp4, 320000/12949 for frag-keyframe.mp4
    /// (`ffprobe -select_streams v -show_entries stream=avg_frame_rate`).
    func testAverageFrameRateIsFFprobes() throws {
        for (name, rate) in [("video-bframes.mp4", 25.0), ("aac-h264-faststart.mp4", 25.0),
                             ("frag-keyframe.mp4", 320000.0 / 12949.0)] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            let video = try XCTUnwrap(reader.tracks.first { $0.kind == .video })
            let samples = try reader.samples(of: video)
            XCTAssertEqual(try XCTUnwrap(samples.averageRate(timescale: video.timescale)), rate, accuracy: 1e-9, name)
        }
        XCTAssertFalse(try SampleIndex(table: Self.table(count: 10).0).isSync(Int.max))
    }

    /// On the B-frame fixtures (pts from ffprobe's stored packets, via the tables), the
    /// presentation lookup finds, for every tick, the sample whose interval
    /// [pts, pts + duration) holds it, as a scan of all samples does.
    func testPresentationLookupMatchesAScanOnBFrames() throws {
        for name in ["video-bframes.mp4", "video-bframes-negative-cts.mp4", "video-ctts-v0-negative.mp4"] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            let samples = try reader.samples(of: reader.tracks[0])
            let all = Array(samples)
            XCTAssertTrue(all.contains { $0.compositionOffset != 0 }, "\(name) reorders frames")
            let end = all.map { $0.presentationTime + Int64($0.duration) }.max() ?? 0
            for time in stride(from: Int64(-600), through: end + 600, by: 7) {
                let expected = all.indices.filter {
                    all[$0].presentationTime <= time && time < all[$0].presentationTime + Int64(all[$0].duration)
                }.max { all[$0].presentationTime < all[$1].presentationTime }
                XCTAssertEqual(samples.index(presentingAt: time), expected, "\(name) at \(time)")
            }
        }
    }

    /// Negative offsets in a version-0 `ctts` (Apple's encoders write them so) are read as
    /// signed, as FFmpeg reads them: the fixture differs from the version-1 one by the version
    /// byte alone, and presents every frame at the same time (ffprobe agrees: the packets
    /// expectation of ProbePacketsCLITests).
    func testVersion0CompositionOffsetsAreSigned() throws {
        func samples(_ name: String) throws -> [Sample] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            return Array(try reader.samples(of: reader.tracks[0]))
        }
        let signed = try samples("video-bframes-negative-cts.mp4")
        let apple = try samples("video-ctts-v0-negative.mp4")
        XCTAssertTrue(signed.contains { $0.compositionOffset < 0 })
        XCTAssertEqual(apple.map(\.presentationTime), signed.map(\.presentationTime))
        XCTAssertEqual(CompositionOffsetBox.offset(coded: 0xFFFF_FE00), -512)
        XCTAssertEqual(CompositionOffsetBox.offset(coded: 1024), 1024)
    }

    /// An `stss` out of order cannot be binary-searched: refused when indexing.
    func testUnorderedSyncTableIsRefused() throws {
        let (table, _) = try Self.table(count: 100)
        var boxes = table.boxes
        boxes.syncSamples = SyncSampleBox(sampleNumbers: [1, 25, 13])
        assertThrows(.invalidSampleTable, try SampleIndex(table: SampleTable(boxes: boxes, fileLength: 100_000)))
    }
}

/// Audio sample descriptions carry their codec's configuration box, as the codecs' ISOBMFF
/// mappings name it (Opus: dOps; FLAC: dfLa; ALAC: alac; AC-3: dac3; E-AC-3: dec3; MPEG-4
/// audio: esds, inside QuickTime's wave in mov-sound-v0.mov's v1 entry).
final class SampleDescriptionTests: XCTestCase {
    func testAudioConfigurationBoxes() throws {
        for (name, format, type) in [("codec-opus.mp4", "Opus", "dOps"), ("codec-flac.mp4", "fLaC", "dfLa"),
                                     ("codec-alac.m4a", "alac", "alac"), ("codec-ac3.mp4", "ac-3", "dac3"),
                                     ("codec-eac3.mp4", "ec-3", "dec3"), ("codec-mp3.mp4", "mp4a", "esds"),
                                     ("aac-quicktime.mov", "mp4a", "esds"), ("mov-sound-v2-96k.mov", "mp4a", "esds")] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            let audio = try XCTUnwrap(reader.tracks.first { $0.kind == .audio }, name)
            let description = try XCTUnwrap(audio.sampleDescriptions.first, name)
            XCTAssertNil(description.parseError, name)
            XCTAssertEqual(description.format.description, format, name)
            XCTAssertEqual(description.configuration?.type.description, type, name)
            XCTAssertNotNil(description.audio, name)
        }
    }
}

/// Every video sample entry of the fixtures (ISO and QuickTime) parses and writes back
/// byte for byte.
final class VisualSampleEntryTests: XCTestCase {
    func testEveryFixtureVideoEntryRoundTrips() throws {
        var checked = 0
        for name in ["aac-h264-faststart.mp4", "video-bframes.mp4", "aac-quicktime.mov", "mov-timecode.mov",
                     "meta-iphone.mov", "frag-gstreamer.mp4", "aac-3gp.3gp", "mov-sound-v0.mov"] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            for track in reader.tracks where track.kind == .video {
                for description in track.sampleDescriptions {
                    let entry = try XCTUnwrap(description.video, "\(name): \(String(describing: description.parseError))")
                    var writer = BoxWriter()
                    entry.write(to: &writer)
                    XCTAssertEqual(writer.bytes, description.entry.bytes, name)
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 8)
    }
}
