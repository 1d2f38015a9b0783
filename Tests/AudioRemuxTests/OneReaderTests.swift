import AudioRemux
import Foundation
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

    /// Chapter starts go through the one presentation rule (they applied the edit list by
    /// hand). The fixture's chapter track has one edit showing its media 0…3 s.
    /// - The edit cut to 2 s: the third chapter (2.25 s) is shown by no edit and is left out.
    ///   FFmpeg 5.1 leaves it out of the chapter track's list too: ffprobe then lists it only
    ///   from `chpl`, in chpl's 100 ns time base, so its chapters in the track's 1/1000 are
    ///   the oracle.
    /// - The edit starting at media 0.5 s (a chapter track primed like its audio): the first
    ///   chapter is the one playing at 0, the others 0.5 s earlier: 0, 0.5, 1.75 s, as the
    ///   old hand rule clamped them. FFmpeg 5.1 is no oracle there: it lists -1.0 and 0 for
    ///   the first two (it keeps the sample before the edit and shifts by a whole sample).
    func testChapterStartsFollowTheOnePresentationRule() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bytes = readFile(fixture("meta-chapters-both.mp4"))
        let elst = Array("elst".utf8)
        let types = (0..<(bytes.count - 4)).filter { Array(bytes[$0..<($0 + 4)]) == elst }
        // The chapter track is the last trak; its one entry: segment duration, media time.
        let entry = try XCTUnwrap(types.last) + 12
        func patched(_ at: Int, _ value: UInt32) -> String {
            var copy = bytes
            copy.replaceSubrange(at..<(at + 4), with: (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) })
            return directory.write("chapters-\(at)-\(value).mp4", copy)
        }
        let short = patched(entry, 2000)
        let shown = try AudioExtractor.probe(short).chapters
        XCTAssertEqual(shown.map(\.title), ["Opening Credits", "Chapitre 1 — L’été"])
        let probe = try runTool("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", short])
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let trackChapters = (listed["chapters"] as? [[String: Any]] ?? []).filter { $0["time_base"] as? String == "1/1000" }
        XCTAssertEqual(trackChapters.compactMap { ($0["start_time"] as? String).flatMap(Double.init) },
                       shown.map(\.start))
        XCTAssertEqual(trackChapters.count, 2, "FFmpeg leaves the chapter after the edit out: \(probe.stdout)")

        let primed = try AudioExtractor.probe(patched(entry + 4, 500)).chapters
        XCTAssertEqual(primed.map(\.start), [0, 0.5, 1.75])
        XCTAssertEqual(primed.map(\.title), ["Opening Credits", "Chapitre 1 — L’été", "Épilogue"])
    }
}
