import AudioRemux
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Our output for each fixture against what ffprobe saw in FFmpeg's own stream copy of the
/// same input (`Fixtures/expected/*.json`, made by `Scripts/make-fixtures.sh`): every
/// packet's timestamps, duration, size and CRC-32, the codec configuration, the start
/// time, duration and edit list.
final class FixtureOracleTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// The manifest `Scripts/fixtures.list`: name, kind (`good`, `exit`, `salvage`) and the
    /// rest of the line.
    static let manifest: [(name: String, kind: String, rest: [String])] = {
        let text = (try? String(contentsOfFile: fixturesDirectory + "/../Scripts/fixtures.list", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .split(separator: " ").map(String.init)
            return fields.count >= 2 ? (fields[0], fields[1], Array(fields.dropFirst(2))) : nil
        }
    }()

    static var goodFixtures: [String] { manifest.filter { $0.kind == "good" }.map(\.name) }

    struct Expectation {
        var stream: [String: Any]
        var packets: [[Any]]
        var movieTimescale: Int
        var elst: [[Int]]?
        /// Where FFmpeg 5.1 is known to be wrong, the right values (see Fixtures/README.md).
        var deviations: [String: Any]

        init(fixture name: String) throws {
            let base = (name as NSString).deletingPathExtension
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture("expected/\(base).json")))
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            stream = try XCTUnwrap(json["stream"] as? [String: Any])
            packets = try XCTUnwrap(json["packets"] as? [[Any]])
            movieTimescale = try XCTUnwrap(json["movie_timescale"] as? Int)
            elst = json["elst"] as? [[Int]]
            deviations = json["known_deviations"] as? [String: Any] ?? [:]
            for (key, value) in deviations {
                guard let expected = (value as? [String: Any])?["expected"] else { continue }
                switch key {
                case "last_packet_duration": if !packets.isEmpty { packets[packets.count - 1][2] = expected }
                case "elst": elst = expected as? [[Int]]
                case _ where key.hasPrefix("stream."): stream[String(key.dropFirst(7))] = expected
                default: break
                }
            }
        }
    }

    func testEveryGoodFixtureMatchesFFmpegStreamCopy() throws {
        XCTAssertGreaterThanOrEqual(Self.goodFixtures.count, 40, "the manifest was not read")
        for name in Self.goodFixtures {
            try check(name)
        }
    }

    func check(_ name: String) throws {
        let expected = try Expectation(fixture: name)
        let output = directory.file(name + ".m4a")
        let result = try AudioExtractor.extract(from: fixture(name), to: output)
        let ours = try DemuxedTrack(path: output, bytes: readFile(output))
        let context = "\(name):"

        // Where the presentation ends (the single edit's end, in media ticks, relative to
        // the first presented sample), for the demuxer's trimming of the last packet.
        let edits = ours.track.editList?.entries ?? []
        var presentationEnd = Int64.max
        if edits.count == 1, let edit = edits.first, !edit.isEmpty,
           let ticks = rescale(edit.segmentDuration, from: ours.movie.header.timescale,
                               to: ours.track.mediaHeader.timescale) {
            presentationEnd = Int64(ticks)
        }

        // Packets: count, pts, dts, duration, size, CRC-32, flags.
        XCTAssertEqual(ours.packets.count, expected.packets.count, "\(context) packet count")
        for (i, (packet, reference)) in zip(ours.packets, expected.packets).enumerated() {
            let flags = "K" + (packet.pts + packet.duration <= 0 ? "D" : "_")
            var duration = packet.duration
            // FFmpeg's demuxer shortens a last packet that straddles the edit's end for some
            // codecs (MP2), in ffprobe's view of our file as of its own: do the same.
            if i == ours.packets.count - 1, packet.pts + duration > presentationEnd,
               "\(reference[2])" == "\(presentationEnd - packet.pts)" {
                duration = presentationEnd - packet.pts
            }
            let actual: [String] = ["\(packet.pts)", "\(packet.dts)", "\(duration)", "\(packet.size)",
                                    hex8(packet.crc), flags]
            let wanted = reference.map { "\($0)" }
            if actual != wanted {
                XCTFail("\(context) packet \(i): ours \(actual), FFmpeg's \(wanted)")
                break
            }
        }

        // The stream as ffprobe describes it.
        let stream = expected.stream
        let track = ours.track
        XCTAssertEqual(ours.movie.tracks.filter(\.isAudio).count, 1, context)
        XCTAssertTrue(track.isAudio, context)
        XCTAssertEqual(track.sampleDescriptions.entries.first?.format.description,
                       stream["codec_tag_string"] as? String, context)
        XCTAssertEqual("1/\(track.mediaHeader.timescale)", stream["time_base"] as? String, context)
        XCTAssertEqual(ours.packets.count, stream["nb_frames"] as? Int, context)
        XCTAssertEqual(result.sampleRate, stream["sample_rate"] as? Int, context)
        XCTAssertEqual(result.channelCount, stream["channels"] as? Int, context)
        let entry = try AudioSampleEntry(parsing: try XCTUnwrap(track.sampleDescriptions.entries.first),
                                         quickTimeLayout: false)
        if let descriptor = entry.elementaryStreamDescriptor, descriptor.objectTypeIndication == 0x40 {
            // For AAC, ffprobe's extradata is the AudioSpecificConfig itself.
            let config = descriptor.decoderSpecificInfo ?? []
            XCTAssertEqual(config.map { hex2($0) }.joined(), stream["extradata"] as? String, "\(context) extradata")
        }
        let firstKept = ours.packets.first { $0.pts + $0.duration > 0 }
        XCTAssertEqual(max(0, firstKept?.pts ?? 0), Int64(try XCTUnwrap(stream["start_pts"] as? Int)),
                       "\(context) start")

        // Duration and edit list, in seconds.
        let movieTimescale = Double(ours.movie.header.timescale)
        if let expectedEdits = expected.elst {
            XCTAssertEqual(edits.count, expectedEdits.count, "\(context) edit count")
            for (edit, reference) in zip(edits, expectedEdits) {
                XCTAssertEqual(Double(edit.segmentDuration) / movieTimescale,
                               Double(reference[0]) / Double(expected.movieTimescale), accuracy: 1e-9,
                               "\(context) edit duration")
                XCTAssertEqual(edit.mediaTime, Int64(reference[1]), "\(context) edit media time")
                XCTAssertEqual([Int(edit.rateInteger), Int(edit.rateFraction)], Array(reference[2...3]), context)
            }
        } else {
            XCTAssertTrue(edits.isEmpty, "\(context) FFmpeg wrote no edit list")
        }
        // ffprobe's duration_ts: the presented packets' span, cut at the edit's end.
        let span = ours.packets.last.map { $0.pts + $0.duration - max(0, firstKept?.pts ?? 0) } ?? 0
        let durationTicks = min(span, presentationEnd)
        XCTAssertEqual(Int(durationTicks), stream["duration_ts"] as? Int, "\(context) duration")
    }

    /// Each bad fixture fails with its own error, and leaves nothing behind.
    func testEveryBadFixtureFailsWithItsOwnError() throws {
        let cases: [(String, RemuxError.Code, ISOBMFFError.Code?)] = [
            ("video-only.mp4", .noAudioTrack, nil),
            ("truncated-no-moov.mp4", .truncatedInput, .endOfFile),
            ("pcm-in-mov.mov", .unsupportedCodec, nil),
            ("corrupt/stsz-count-mismatch.mp4", .invalidInput, .invalidSampleTable),
            ("corrupt/stsz-count-huge.mp4", .invalidInput, .countExceedsBox),
            ("corrupt/stco-beyond-eof.mp4", .invalidInput, .invalidSampleTable),
            ("corrupt/stsc-first-chunk-zero.mp4", .invalidInput, .invalidSampleTable),
            ("corrupt/stsc-chunk-missing.mp4", .invalidInput, .invalidSampleTable),
            ("corrupt/box-size-too-small.mp4", .invalidInput, .invalidBoxSize),
            ("corrupt/box-past-parent.mp4", .invalidInput, .boxOutsideParent),
            ("corrupt/largesize-overflow.mp4", .invalidInput, .invalidBoxSize),
            ("corrupt/stts-count-huge.mp4", .invalidInput, .countExceedsBox),
            ("corrupt/esds-lying-length.mp4", .invalidInput, .invalidValue),
            ("corrupt/not-mp4.bin", .invalidInput, .invalidValue),
            ("pcm-in24.mov", .unsupportedCodec, nil),
            ("pcm-fl32.mov", .unsupportedCodec, nil),
            ("pcm-twos.mov", .unsupportedCodec, nil),
            ("dref-external.mp4", .unsupportedInput, nil),
            ("enca-renamed.mp4", .unsupportedInput, nil),
            ("aac-h264-faststart-truncated.mp4", .truncatedInput, nil),
            ("frag-keyframe-truncated.mp4", .truncatedInput, nil),
        ]
        let listed = Set(Self.manifest.filter { $0.kind != "good" }.map(\.name))
        XCTAssertEqual(Set(cases.map(\.0)), listed, "every bad fixture of the manifest has its case here")
        for (name, code, parseCode) in cases {
            let output = directory.file("bad.m4a")
            XCTAssertThrowsError(try AudioExtractor.extract(from: fixture(name), to: output), name) { error in
                let error = error as? RemuxError
                XCTAssertEqual(error?.code, code, "\(name): \(String(describing: error))")
                XCTAssertEqual(error?.parseError?.code, parseCode, "\(name): \(String(describing: error))")
            }
            XCTAssertEqual(directory.contents, [], "\(name) left files behind")
        }
    }

    /// With --salvage, a truncated fixture gives the packets of the complete part: the first
    /// N packets of FFmpeg's copy of the uncut file (N counted by the fixture script).
    func testTruncatedFixturesSalvageTheirCompletePart() throws {
        let truncated = Self.manifest.filter { $0.kind == "salvage" && !$0.rest.isEmpty }
        XCTAssertFalse(truncated.isEmpty, "the manifest lists truncated fixtures")
        for (name, _, rest) in truncated {
            let uncut = try Expectation(fixture: rest[0])
            let output = directory.file(name + ".m4a")
            let result = try AudioExtractor.extract(from: fixture(name), to: output,
                                                    options: ExtractionOptions(salvage: true))
            let report = try XCTUnwrap(result.salvage, name)
            let ours = try DemuxedTrack(path: output, bytes: readFile(output))
            XCTAssertGreaterThan(ours.packets.count, 0, name)
            XCTAssertLessThan(ours.packets.count, uncut.packets.count, name)
            for (i, (packet, reference)) in zip(ours.packets, uncut.packets).enumerated() {
                // Timing may end earlier (the cut edit); the bytes must be the uncut file's.
                let wanted = reference.map { "\($0)" }
                XCTAssertEqual(["\(packet.size)", hex8(packet.crc)], [wanted[3], wanted[4]], "\(name) packet \(i)")
            }
            XCTAssertGreaterThan(report.recoveredSeconds, 0, name)
            XCTAssertEqual(report.fileLength, UInt64(readFile(fixture(name)).count), name)
        }
    }
}

private func hex2(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return text.count == 1 ? "0" + text : text
}

private func hex8(_ value: UInt32) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: 8 - text.count) + text
}