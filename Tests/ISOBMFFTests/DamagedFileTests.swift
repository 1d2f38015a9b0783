import ISOBMFF
import TestSupport
import XCTest

/// One damaged part does not hide the rest of a file (issue 20): the reader opens files with
/// a track lacking `stsd`, a second `moov`, a chunk overlapping `moov` or a cut `mdat`, names
/// the damage per track, and reads every other track. Fixtures from Scripts/damage.py; the
/// packets of the readable tracks are checked against ffprobe in PacketsConformanceTests.
final class DamagedFileTests: XCTestCase {
    func reader(_ name: String) throws -> MovieReader<MemoryByteSource> {
        try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
    }

    func assertThrows(_ code: ISOBMFFError.Code, _ body: @autoclosure () throws -> some Any,
                      file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) {
            XCTAssertEqual(($0 as? ISOBMFFError)?.code, code, "\($0)", file: file, line: line)
        }
    }

    func testTrackWithoutSampleDescriptionsIsListedWithItsProblem() throws {
        let reader = try reader("damaged/audio-no-stsd.mp4")
        XCTAssertEqual(reader.tracks.map(\.id), [1, 2])
        let audio = try XCTUnwrap(reader.track(id: 2))
        XCTAssertEqual(audio.problem?.code, .missingBox)
        XCTAssertEqual(audio.problem?.path, "moov/trak[2]/mdia/minf/stbl")
        assertThrows(.missingBox, try reader.samples(of: audio))
        assertThrows(.missingBox, try reader.wholeSamples(of: audio))
        let video = try XCTUnwrap(reader.track(id: 1))
        XCTAssertNil(video.problem)
        XCTAssertEqual(try reader.samples(of: video).count, 75)
    }

    func testSecondMovieBoxIsIgnoredWithAWarning() throws {
        let reader = try reader("damaged/second-moov.mp4")
        // The second moov lacks the audio track: reading it would lose track 2.
        XCTAssertEqual(reader.tracks.map(\.id), [1, 2])
        XCTAssertEqual(reader.movie.movieBoxRange.lowerBound, 32)
        XCTAssertEqual(reader.warnings.map(\.code), [.duplicateBox])
        XCTAssertEqual(reader.warnings.first?.offset, 63095)
        XCTAssertEqual(try reader.samples(of: XCTUnwrap(reader.track(id: 2))).count, 131)
    }

    func testChunkOverlappingTheMovieBoxFailsThatTrackOnly() throws {
        let reader = try reader("damaged/audio-chunk-in-moov.mp4")
        let audio = try XCTUnwrap(reader.track(id: 2))
        XCTAssertNil(audio.problem, "found by samples(of:), not on opening")
        assertThrows(.invalidSampleTable, try reader.samples(of: audio))
        assertThrows(.invalidSampleTable, try reader.wholeSamples(of: audio))
        XCTAssertEqual(try reader.samples(of: XCTUnwrap(reader.track(id: 1))).count, 75)
    }

    /// A file cut inside `mdat`: every sample lying wholly inside the file (38 video, 65
    /// audio; ffprobe returns a 66th, partial audio packet), none past the cut.
    func testCutFileGivesTheWholeSamplesBeforeTheCut() throws {
        let reader = try reader("aac-h264-faststart-truncated.mp4")
        for (id, count) in [(UInt32(1), 38), (2, 65)] {
            let track = try XCTUnwrap(reader.track(id: id))
            assertThrows(.invalidSampleTable, try reader.samples(of: track))
            let (samples, truncation) = try reader.wholeSamples(of: track)
            XCTAssertEqual(samples.count, count)
            XCTAssertEqual(truncation?.code, .endOfFile)
            XCTAssertTrue(samples.allSatisfy { $0.offset + UInt64($0.size) <= 34359 })
        }
        // A file that ends at a box boundary but whose last chunk lies past it (the file's
        // end as its tables see it): the samples before that chunk, as ffprobe lists 129.
        let beyond = try self.reader("corrupt/stco-beyond-eof.mp4")
        let cut = try beyond.wholeSamples(of: XCTUnwrap(beyond.track(id: 2)))
        XCTAssertNil(beyond.movie.truncatedBox)
        XCTAssertEqual(cut.samples.count, 129)
        XCTAssertEqual(cut.truncation?.code, .endOfFile)
        // A complete track: the same samples as samples(of:), no truncation.
        let whole = try self.reader("aac-h264-faststart.mp4")
        let track = try XCTUnwrap(whole.track(id: 1))
        let (samples, truncation) = try whole.wholeSamples(of: track)
        XCTAssertNil(truncation)
        XCTAssertEqual(samples.count, try whole.samples(of: track).count)
    }
}
