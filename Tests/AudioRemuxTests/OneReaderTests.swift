import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Extraction, probe and chapters take a track's tables from one place,
/// `MovieReader.sampleTable(of:)`, and its presentation from one rule,
/// `TrackPresentation(of:in:mediaDuration:mediaEnd:)` (issue 29, "one reader"): none of them
/// accepts a table another refuses, and none assembles the rule's inputs its own way.
final class OneReaderTests: XCTestCase {
    /// Before: probe rebuilt the table without the chunk-overlaps-`moov` check and listed 131
    /// audio packets that extraction refused to copy.
    func testProbeRefusesTheTableExtractionRefuses() throws {
        let path = fixture("damaged/audio-chunk-in-moov.mp4")
        var sink = MemoryByteSink()
        XCTAssertThrowsError(try AudioExtractor.extract(from: MemoryByteSource(readFile(path)), to: &sink))
        let report = try AudioExtractor.probe(path)
        let audio = try XCTUnwrap(report.tracks.first { $0.trackID == 2 })
        XCTAssertEqual(audio.sampleCount, 0)
        XCTAssertNotNil(audio.extractionProblem)
        XCTAssertEqual(report.tracks.first { $0.trackID == 1 }?.sampleCount, 75)
    }

    func testOneTableOneRuleForEveryTrack() throws {
        for name in ["aac-h264-faststart.mp4", "frag-keyframe.mp4", "meta-2112-priming.mp4"] {
            let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture(name))))
            for track in reader.tracks {
                let tables = try reader.sampleTable(of: track.track)
                let samples = try reader.samples(of: track)
                XCTAssertEqual(tables.table.sampleCount, samples.count, name)
                XCTAssertEqual(tables.table.presentationEnd, samples.presentationEnd, name)
                XCTAssertEqual(TrackPresentation(of: track.track, in: reader.movie,
                                                 mediaDuration: tables.table.totalDuration,
                                                 mediaEnd: tables.table.presentationEnd),
                               reader.presentation(of: track, samples: samples), name)
            }
        }
    }

    func testOverlappingMovieBoxIsRefusedByTheOneTable() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("damaged/audio-chunk-in-moov.mp4"))))
        let audio = try XCTUnwrap(reader.track(id: 2))
        XCTAssertThrowsError(try reader.sampleTable(of: audio.track)) {
            XCTAssertEqual(($0 as? ISOBMFFError)?.code, .invalidSampleTable)
        }
        XCTAssertThrowsError(try reader.wholeSampleTable(of: audio.track)) {
            XCTAssertEqual(($0 as? ISOBMFFError)?.code, .invalidSampleTable)
        }
    }

    /// A fragmented file cut inside a fragment: the one table holds the whole samples before
    /// the cut and says where the cut fragment starts.
    func testCutFragmentIsReported() throws {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("frag-keyframe-truncated.mp4"))))
        let audio = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        let tables = try reader.sampleTable(of: audio.track)
        let cut = try XCTUnwrap(tables.incompleteFragment)
        XCTAssertLessThan(cut.offset, reader.movie.fileLength)
        XCTAssertGreaterThan(tables.table.sampleCount, 0)
        XCTAssertEqual(try reader.wholeSamples(of: audio).truncation?.offset, cut.offset)
    }
}
