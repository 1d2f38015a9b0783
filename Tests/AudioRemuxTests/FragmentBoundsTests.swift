import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Issue 11, point 1: sample counts above the file's length in a fragmented movie's
/// `moov` (a 4-bit `stz2` packs two samples in a byte, and they may be empty).
final class FragmentBoundsTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    // MARK: - Point 1: 4-bit stz2 with more samples than the file has bytes, plus mvex

    /// A ~100 KB file whose moov holds 200,000 zero-size samples in a 4-bit `stz2`, with
    /// `mvex` and an empty `moof`: the fragment builder subtracted the sample count from a
    /// limit derived from the file's length and trapped.
    static func compactSizesWithFragments(sampleCount: UInt32 = 200_000) -> [UInt8] {
        var stbl = BoxWriter()
        stbl.box(.stbl) { s in
            SampleDescriptionBox(entries: [.init(format: .mp4a, bytes: SyntheticMovie.aacEntry)]).write(to: &s)
            TimeToSampleBox(entries: [.init(sampleCount: sampleCount, sampleDelta: 1024)]).write(to: &s)
            SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: sampleCount, sampleDescriptionIndex: 1)])
                .write(to: &s)
            s.fullBox(.stz2, version: 0, flags: 0) { z in
                z.writeZeros(3)
                z.write(UInt8(4))
                z.write(sampleCount)
                z.writeZeros(Int(sampleCount + 1) / 2)
            }
            ChunkOffsetBox(offsets: [40]).write(to: &s)
        }
        var synthetic = SyntheticMovie(sampleCount: 0)
        synthetic.replaceSampleTable = stbl.bytes
        synthetic.editList = nil
        var mvex = BoxWriter()
        mvex.box("mvex") { TrackExtendsBox(trackID: 1).write(to: &$0) }
        synthetic.extraMovieBoxes = [mvex.bytes]
        var moof = BoxWriter()
        moof.box(.moof) { m in m.fullBox("mfhd", version: 0, flags: 0) { $0.write(UInt32(1)) } }
        return synthetic.build() + moof.bytes
    }

    func testCompactZeroSizeSamplesBeyondTheFileLengthDoNotTrap() throws {
        let bytes = Self.compactSizesWithFragments()
        XCTAssertLessThan(bytes.count, 200_000, "fewer bytes than samples")
        let input = directory.write("stz2.mp4", bytes)
        // Probe describes it (or refuses it) without trapping, and says the track cannot be extracted.
        if let report = try? AudioExtractor.probe(input) {
            XCTAssertNotNil(report.tracks.first?.extractionProblem)
        }
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("stz2.m4a"))) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .invalidInput)
        }
    }

    /// The builder itself: moov samples beyond the limit are an error, not an underflow.
    func testFragmentBuilderRefusesMoovSamplesBeyondItsLimit() throws {
        let bytes = Self.compactSizesWithFragments()
        let movie = try Movie(reading: MemoryByteSource(bytes))
        XCTAssertThrowsError(try movie.fragmentedTrack(movie.tracks[0], in: MemoryByteSource(bytes))) { error in
            XCTAssertEqual((error as? ISOBMFFError)?.code, .limitExceeded)
        }
    }
}
