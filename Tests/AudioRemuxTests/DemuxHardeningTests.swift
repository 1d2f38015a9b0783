import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Issue 11, points 5, 6 and 16: crafted inputs that used to trap, give an empty output,
/// or make `probe` contradict extraction.
final class DemuxHardeningTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    // MARK: - Point 5: an audio track with no samples

    /// Like a YouTube DASH audio file cut at 2 KB: `mvex`, an empty `stbl`, `mdhd` and
    /// `mvhd` claiming hours, then a `sidx` indexing thousands of subsegments that are
    /// not in the file.
    static func dashAudioCutShort() -> [UInt8] {
        var synthetic = SyntheticFragmentedMovie(fragments: [])
        synthetic.trexDefaults = (1024, 0)
        var file = synthetic.build()
        var sidx = BoxWriter()
        sidx.fullBox("sidx", version: 0, flags: 0) { s in
            s.write(UInt32(1))  // reference_ID
            s.write(UInt32(44100))  // timescale
            s.write(UInt32(0))  // earliest_presentation_time
            s.write(UInt32(0))  // first_offset
            s.write(UInt16(0))
            s.write(UInt16(12_345))  // reference_count
            for _ in 0..<12_345 {
                s.write(UInt32(20_000))
                s.write(UInt32(441_000))
                s.write(UInt32(0x9000_0000))
            }
        }
        file += sidx.bytes
        return Array(file.prefix(2048))
    }

    func testAudioTrackWithNoSamplesIsAnErrorNotAnEmptyOutput() throws {
        let input = directory.write("dash-cut.mp4", Self.dashAudioCutShort())
        let output = directory.file("dash-cut.m4a")
        for salvage in [false, true] {
            XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: output,
                                                            options: ExtractionOptions(salvage: salvage))) { error in
                // The file ends inside its sidx: whatever followed it (the fragments) is lost,
                // so it is truncated, with no whole sample to salvage (issue 32).
                let error = error as? RemuxError
                XCTAssertEqual(error?.code, .truncatedInput, "\(String(describing: error))")
                let message = error?.message ?? ""
                XCTAssertTrue(message.contains("no whole audio sample") || message.contains("no samples before the cut"),
                              "\(String(describing: error))")
                XCTAssertTrue(error?.message.contains("ends at byte 2048") ?? false, "\(String(describing: error))")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
        let report = try AudioExtractor.probe(input)
        XCTAssertNotNil(report.tracks[0].extractionProblem)
        XCTAssertEqual(report.tracks[0].sampleCount, 0)
    }

    func testRegularAudioTrackWithNoSamplesIsAnError() throws {
        var synthetic = SyntheticMovie(sampleCount: 0)
        synthetic.editList = nil
        synthetic.sampleToChunk = SampleToChunkBox(entries: [])
        synthetic.timeToSample = TimeToSampleBox(entries: [])
        let input = directory.write("empty.mp4", synthetic.build())
        XCTAssertThrowsError(try AudioExtractor.extract(from: input, to: directory.file("empty.m4a"))) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .invalidInput)
            XCTAssertTrue((error as? RemuxError)?.message.contains("no samples") ?? false, "\(error)")
        }
        XCTAssertNotNil(try AudioExtractor.probe(input).tracks[0].extractionProblem)
    }

    // MARK: - Point 16: edit lists that overflow or point outside the media

    static func movie(withEdit edit: EditListBox.Entry) -> SyntheticMovie {
        var synthetic = SyntheticMovie(sampleCount: 10)
        synthetic.editList = EditListBox(entries: [edit])
        return synthetic
    }

    /// What the media holds: 10 samples of 1024 ticks at 44.1 kHz.
    let mediaSeconds = 10.0 * 1024 / 44100

    func testOverflowingVersion1EditIsIgnoredInExtractAndProbe() throws {
        let synthetic = Self.movie(withEdit: .init(segmentDuration: 300_000_000_000_000_000, mediaTime: Int64.max))
        let input = directory.write("elst.mp4", synthetic.build())
        for keepMetadata in [true, false] {
            let output = directory.file("elst-\(keepMetadata).m4a")
            let result = try AudioExtractor.extract(from: input, to: output,
                                                    options: ExtractionOptions(keepMetadata: keepMetadata))
            XCTAssertEqual(result.duration, mediaSeconds, accuracy: 0.002, "the track is presented whole")
            XCTAssertTrue(result.warnings.contains { $0.contains("edit list") && $0.contains("ignored") }, "\(result.warnings)")
            let written = try DemuxedTrack(path: output, bytes: readFile(output))
            XCTAssertEqual(written.packets.count, 10)
        }
        let report = try AudioExtractor.probe(input)
        XCTAssertEqual(report.tracks[0].duration, mediaSeconds, accuracy: 0.002)
        XCTAssertEqual(report.tracks[0].primingSamples, 0)
        XCTAssertTrue(report.tracks[0].warnings.contains { $0.contains("edit list") && $0.contains("ignored") })
        XCTAssertNil(report.tracks[0].extractionProblem)
        XCTAssertLessThanOrEqual(report.duration, mediaSeconds + 0.002)
    }

    func testEditPastTheMediaIsIgnoredAndHugeSegmentIsBounded() throws {
        // media_time beyond the media's 10 240 ticks.
        let past = directory.write("past.mp4", Self.movie(withEdit: .init(segmentDuration: 100, mediaTime: 50_000)).build())
        let result = try AudioExtractor.extract(from: past, to: directory.file("past.m4a"))
        XCTAssertEqual(result.duration, mediaSeconds, accuracy: 0.002)
        XCTAssertTrue(result.warnings.contains { $0.contains("edit list") })
        XCTAssertEqual(try AudioExtractor.probe(past).tracks[0].duration, mediaSeconds, accuracy: 0.002)
        // A 32-bit segment of 4 billion ms from media time 1024: presented up to the media's end.
        let long = directory.write("long.mp4", Self.movie(withEdit: .init(segmentDuration: 4_000_000_000,
                                                                          mediaTime: 1024)).build())
        let presented = (10.0 * 1024 - 1024) / 44100
        let longResult = try AudioExtractor.extract(from: long, to: directory.file("long.m4a"))
        XCTAssertEqual(longResult.duration, presented, accuracy: 0.002)
        let report = try AudioExtractor.probe(long)
        XCTAssertEqual(report.tracks[0].duration, presented, accuracy: 0.002)
        XCTAssertEqual(report.tracks[0].primingSamples, 1024)
    }

    func testOrdinaryEditIsKept() throws {
        // 100 ms from media time 1024: presented as it says, with its priming.
        let input = directory.write("ok.mp4", Self.movie(withEdit: .init(segmentDuration: 100, mediaTime: 1024)).build())
        let result = try AudioExtractor.extract(from: input, to: directory.file("ok.m4a"))
        XCTAssertEqual(result.duration, 0.1, accuracy: 0.0005)
        XCTAssertTrue(result.warnings.allSatisfy { !$0.contains("edit list") }, "\(result.warnings)")
        let report = try AudioExtractor.probe(input)
        XCTAssertEqual(report.tracks[0].duration, 0.1, accuracy: 0.0005)
        XCTAssertEqual(report.tracks[0].primingSamples, 1024)
        XCTAssertEqual(report.tracks[0].warnings, [])
    }

    // MARK: - Point 6: probe agrees with extraction

    /// Whether each audio track probe calls extractable extracts, and the other way round.
    func assertProbeAgreesWithExtraction(_ path: String, file: StaticString = #filePath, line: UInt = #line) {
        let name = (path as NSString).lastPathComponent
        guard let report = try? AudioExtractor.probe(path) else {
            XCTAssertThrowsError(try AudioExtractor.extract(from: path, to: directory.file("x.m4a"),
                                                            options: ExtractionOptions(overwrite: true)),
                                 "\(name): probe refuses it, extraction must too", file: file, line: line)
            return
        }
        for track in report.tracks where track.kind == "audio" {
            for salvage in [false, true] {
                let output = directory.file("agree.m4a")
                let options = ExtractionOptions(track: .trackID(track.trackID), overwrite: true, salvage: salvage)
                var failure: Error?
                do { _ = try AudioExtractor.extract(from: path, to: output, options: options) } catch { failure = error }
                let probed = salvage ? (track.extractionProblem == nil || track.extractableWithSalvage)
                    : track.extractionProblem == nil
                XCTAssertEqual(probed, failure == nil, "\(name) track \(track.trackID) salvage \(salvage): probe says "
                               + "\(track.extractionProblem ?? "extractable"), extraction \(failure.map { "\($0)" } ?? "works")",
                               file: file, line: line)
            }
        }
    }

    func testProbeAgreesWithExtractionOnCorruptAndFuzzFixtures() throws {
        for folder in ["corrupt", "fuzz"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture(folder)).filter { !$0.hasSuffix(".md") }
            XCTAssertFalse(names.isEmpty)
            for name in names.sorted() { assertProbeAgreesWithExtraction(fixture(folder + "/" + name)) }
        }
    }

    func testProbeAgreesWithExtractionOnTruncations() throws {
        for name in ["aac-h264-faststart.mp4", "aac-h264-moov-end.mp4", "frag-keyframe.mp4", "frag-dash.mp4"] {
            let bytes = readFile(fixture(name))
            for fraction in [0.1, 0.3, 0.5, 0.7, 0.9, 0.99] {
                let cut = directory.write("cut-\(name)", Array(bytes.prefix(Int(Double(bytes.count) * fraction))))
                assertProbeAgreesWithExtraction(cut)
            }
        }
        for name in ["aac-h264-faststart.mp4", "frag-keyframe.mp4"] {
            assertProbeAgreesWithExtraction(fixture(name))
        }
    }

    func testProbeSaysWhenOnlySalvageExtracts() throws {
        let bytes = readFile(fixture("aac-h264-faststart.mp4"))
        let cut = directory.write("cut.mp4", Array(bytes.prefix(bytes.count * 2 / 3)))
        let track = try XCTUnwrap(AudioExtractor.probe(cut).tracks.first { $0.kind == "audio" })
        XCTAssertNotNil(track.extractionProblem)
        XCTAssertTrue(track.extractableWithSalvage)
        XCTAssertTrue(track.extractionProblem?.contains("salvaging can extract") ?? false, track.extractionProblem ?? "")
        // The error says so in a field, for programs (and the CLI's "(use --salvage)") to match on.
        XCTAssertThrowsError(try AudioExtractor.extract(from: cut, to: directory.file("o.m4a"))) {
            let error = $0 as? RemuxError
            XCTAssertEqual(error?.code, .truncatedInput)
            XCTAssertGreaterThan(error?.salvageable?.recoveredSeconds ?? 0, 0, "\($0)")
        }
    }

    /// Points 5 and 6: a DASH file cut at 2 KB (inside its first fragment) holds no whole
    /// audio sample. Salvaging was offered, and then failed; now neither the error nor probe
    /// offers it, and probe agrees with extraction with and without salvage.
    func testCutBeforeTheFirstWholeSampleDoesNotOfferSalvage() throws {
        for name in ["frag-dash.mp4", "frag-keyframe.mp4"] {
            let cut = directory.write("cut-" + name, Array(readFile(fixture(name)).prefix(2048)))
            for salvage in [false, true] {
                XCTAssertThrowsError(try AudioExtractor.extract(from: cut, to: directory.file("o.m4a"),
                                                                options: ExtractionOptions(salvage: salvage))) {
                    let error = $0 as? RemuxError
                    XCTAssertEqual(error?.code, .truncatedInput, "\(name)")
                    XCTAssertFalse(error?.message.contains("salvaging can extract") ?? true, "\(name): \($0)")
                    XCTAssertNil(error?.salvageable, "\(name)")
                }
            }
            let track = try XCTUnwrap(AudioExtractor.probe(cut).tracks.first { $0.kind == "audio" })
            XCTAssertFalse(track.extractableWithSalvage, name)
            XCTAssertFalse(track.extractionProblem?.contains("salvaging can extract") ?? true,
                           track.extractionProblem ?? "")
        }
    }
}
