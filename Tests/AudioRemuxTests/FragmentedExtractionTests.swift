import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Fragmented inputs (ISO/IEC 14496-12 § 8.8) built sample by sample, so every expected
/// packet is known independently of the parser: the output is a regular M4A whose
/// packets are the fragments' samples in order.
final class FragmentedExtractionTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    typealias Sample = SyntheticFragmentedMovie.Sample

    static func samples(_ count: Int, from start: Int = 0, duration: UInt32 = 1024) -> [Sample] {
        (start..<(start + count)).map { Sample(size: UInt32(50 + $0 * 3), duration: duration) }
    }

    func extract(_ synthetic: SyntheticFragmentedMovie, salvage: Bool = false, cut: Int = 0) throws -> DemuxedTrack {
        var bytes = synthetic.build()
        bytes.removeLast(cut)
        let input = directory.write("frag-\(UUID().uuidString).mp4", bytes)
        let output = directory.file("out-\(UUID().uuidString).m4a")
        _ = try AudioExtractor.extract(from: input, to: output, options: ExtractionOptions(salvage: salvage))
        return try DemuxedTrack(path: output, bytes: readFile(output))
    }

    /// The packets the samples describe: sizes, durations, timestamps and byte contents.
    func expectedPackets(_ samples: [Sample], shift: Int64 = 0) -> [DemuxedTrack.Packet] {
        var dts: Int64 = 0
        return samples.enumerated().map { n, sample in
            defer { dts += Int64(sample.duration) }
            return .init(pts: dts + Int64(sample.compositionOffset) - shift, dts: dts - shift,
                         duration: Int64(sample.duration), size: Int(sample.size),
                         crc: crc32([UInt8](repeating: UInt8(n & 0xFF), count: Int(sample.size))))
        }
    }

    func testFragmentsWithDefaultBaseIsMoof() throws {
        let synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(5))], decodeTime: 0),
            .init(runs: [.init(samples: Self.samples(5, from: 5))], decodeTime: 5 * 1024),
            .init(runs: [.init(samples: Self.samples(3, from: 10) + [Sample(size: 7, duration: 204)])],
                  decodeTime: 10 * 1024),
        ])
        let output = try extract(synthetic)
        XCTAssertEqual(output.packets, expectedPackets(synthetic.audioSamples))
        XCTAssertFalse(output.movie.isFragmented, "the output is a regular movie")
        XCTAssertEqual(output.track.mediaHeader.duration, 13 * 1024 + 204, "mdhd holds the real duration")
        XCTAssertEqual(output.packets.last?.duration, 204, "the trun's last duration is kept")
    }

    func testExplicitBaseDataOffsetAndVideoFragmentsBeside() throws {
        var synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(4))], videoSamples: [300, 120]),
            .init(runs: [.init(samples: Self.samples(4, from: 4))], videoSamples: [90]),
        ])
        synthetic.base = .explicit
        XCTAssertEqual(try extract(synthetic).packets, expectedPackets(synthetic.audioSamples))
    }

    func testImplicitBaseContinuesAfterThePreviousTrackFragment() throws {
        var synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(3), hasDataOffset: false)], videoSamples: [200]),
            .init(runs: [.init(samples: Self.samples(3, from: 3), hasDataOffset: false)], videoSamples: [150, 10]),
        ])
        synthetic.base = .implicit
        XCTAssertEqual(try extract(synthetic).packets, expectedPackets(synthetic.audioSamples))
    }

    func testSeveralRunsPerFragmentAndRunsWithoutDataOffset() throws {
        let synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(2)), .init(samples: Self.samples(3, from: 2), hasDataOffset: false),
                         .init(samples: Self.samples(2, from: 5))]),
        ])
        XCTAssertEqual(try extract(synthetic).packets, expectedPackets(synthetic.audioSamples))
    }

    func testDefaultsFromTrackFragmentHeaderAndTrackExtends() throws {
        let constant = [Sample](repeating: Sample(size: 64, duration: 960), count: 6)
        let fromHeader = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: constant, perSampleFields: false)]),
            .init(runs: [.init(samples: constant, perSampleFields: false)]),
        ])
        XCTAssertEqual(try extract(fromHeader).packets, expectedPackets(fromHeader.audioSamples))
        var fromTrex = fromHeader
        fromTrex.trexDefaults = (960, 64)
        XCTAssertEqual(try extract(fromTrex).packets, expectedPackets(fromTrex.audioSamples))
    }

    func testDecodeTimeGapLengthensThePreviousSample() throws {
        let synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(2))], decodeTime: 0),
            .init(runs: [.init(samples: Self.samples(2, from: 2))], decodeTime: 3 * 1024),
        ])
        var expected = synthetic.audioSamples
        expected[1].duration += 1024
        XCTAssertEqual(try extract(synthetic).packets, expectedPackets(expected))
    }

    func testSignedCompositionOffsets() throws {
        var samples = Self.samples(4)
        samples[1].compositionOffset = -512
        samples[2].compositionOffset = 512
        let synthetic = SyntheticFragmentedMovie(fragments: [.init(runs: [.init(samples: samples)])])
        let output = try extract(synthetic)
        // Written with no negative offset (players mis-read them after an edit: MovieWriter's
        // compositionShift): every offset and the edit's media time 512 later, so each packet
        // is presented where it was (the reader here counts times from the edit's media time).
        var shifted = samples
        for i in shifted.indices { shifted[i].compositionOffset += 512 }
        XCTAssertEqual(output.packets, expectedPackets(shifted, shift: 512))
        XCTAssertEqual(output.packets.map(\.pts), expectedPackets(samples).map(\.pts))
        XCTAssertEqual(output.table.boxes.compositionOffsets?.version, 0)
        XCTAssertEqual(output.track.editList?.entries.first?.mediaTime, 512)
    }

    func testInitSegmentEditListIsKept() throws {
        var synthetic = SyntheticFragmentedMovie(fragments: [.init(runs: [.init(samples: Self.samples(8))])])
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 0, mediaTime: 1024)])
        let output = try extract(synthetic)
        XCTAssertEqual(output.packets, expectedPackets(synthetic.audioSamples, shift: 1024))
        // Duration 0 ("the rest of the media") becomes the real presented duration: 7 × 1024 ticks.
        let edit = try XCTUnwrap(output.track.editList?.entries.first)
        XCTAssertEqual(edit.mediaTime, 1024)
        XCTAssertEqual(edit.segmentDuration, rescale(7 * 1024, from: 44100, to: 1000))
    }

    func testTruncatedFragmentIsRefusedOrSalvaged() throws {
        let synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: Self.samples(4))]),
            .init(runs: [.init(samples: Self.samples(4, from: 4))]),
            .init(runs: [.init(samples: Self.samples(4, from: 8))]),
        ])
        XCTAssertThrowsError(try extract(synthetic, cut: 30)) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .truncatedInput)
            XCTAssertTrue("\($0)".contains("2 complete fragments"), "\($0)")
        }
        XCTAssertFalse(directory.contents.contains { $0.hasSuffix(".m4a") || $0.hasSuffix(".tmp") })
        // The cut (30 bytes into the last sample, of 83) leaves 2 whole fragments and 3 whole
        // samples of the third, whose moof is intact.
        let salvaged = try extract(synthetic, salvage: true, cut: 30)
        XCTAssertEqual(salvaged.packets, expectedPackets(Array(synthetic.audioSamples.prefix(11))))
        // Cut inside the third moof itself (its mdat is 8 + 314 bytes): only the two whole
        // fragments remain.
        let beforeMoof = try extract(synthetic, salvage: true, cut: 8 + 314 + 20)
        XCTAssertEqual(beforeMoof.packets, expectedPackets(Array(synthetic.audioSamples.prefix(8))))
    }

    func testRunClaimingBillionsOfSamplesIsRefusedWithoutAllocating() throws {
        var synthetic = SyntheticFragmentedMovie(fragments: [
            .init(runs: [.init(samples: [Sample](repeating: Sample(size: 0, duration: 1), count: 1),
                               perSampleFields: false)]),
        ])
        synthetic.trexDefaults = (1, 0)
        var bytes = synthetic.build()
        // Patch the trun's sample count to 0xFFFFFFF0.
        let trun = try XCTUnwrap(bytes.indices.first { bytes[$0..<($0 + 4)].elementsEqual("trun".utf8) })
        bytes.replaceSubrange((trun + 8)..<(trun + 12), with: [0xFF, 0xFF, 0xFF, 0xF0])
        let input = directory.write("huge.mp4", bytes)
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("huge.m4a"))) {
            XCTAssertEqual(($0 as? RemuxError)?.parseError?.code, .limitExceeded, "\($0)")
        }
    }
}
