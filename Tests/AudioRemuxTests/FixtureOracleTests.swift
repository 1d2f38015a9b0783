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

    static let goodFixtures = [
        "aac-h264-moov-end.mp4", "aac-h264-faststart.mp4", "aac-audio-first.mp4", "aac-two-audio.mp4",
        "aac-48k-mono.mp4", "aac-5.1.mp4", "aac-quicktime.mov",
    ]

    struct Expectation {
        var stream: [String: Any]
        var packets: [[Any]]
        var movieTimescale: Int
        var elst: [[Int]]?

        init(fixture name: String) throws {
            let base = (name as NSString).deletingPathExtension
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture("expected/\(base).json")))
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            stream = try XCTUnwrap(json["stream"] as? [String: Any])
            packets = try XCTUnwrap(json["packets"] as? [[Any]])
            movieTimescale = try XCTUnwrap(json["movie_timescale"] as? Int)
            elst = json["elst"] as? [[Int]]
        }
    }

    func testEveryGoodFixtureMatchesFFmpegStreamCopy() throws {
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

        // Packets: count, pts, dts, duration, size, CRC-32, flags.
        XCTAssertEqual(ours.packets.count, expected.packets.count, "\(context) packet count")
        for (i, (packet, reference)) in zip(ours.packets, expected.packets).enumerated() {
            let flags = "K" + (packet.pts + packet.duration <= 0 ? "D" : "_")
            let actual: [String] = ["\(packet.pts)", "\(packet.dts)", "\(packet.duration)", "\(packet.size)",
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
        XCTAssertEqual(ours.movie.tracks.count, 1, context)
        XCTAssertTrue(track.isAudio, context)
        XCTAssertEqual(track.sampleDescriptions.entries.first?.format.description,
                       stream["codec_tag_string"] as? String, context)
        XCTAssertEqual("1/\(track.mediaHeader.timescale)", stream["time_base"] as? String, context)
        XCTAssertEqual(ours.packets.count, stream["nb_frames"] as? Int, context)
        XCTAssertEqual(result.sampleRate, stream["sample_rate"] as? Int, context)
        XCTAssertEqual(result.channelCount, stream["channels"] as? Int, context)
        let entry = try AudioSampleEntry(parsing: try XCTUnwrap(track.sampleDescriptions.entries.first),
                                         quickTimeLayout: false)
        let config = entry.elementaryStreamDescriptor?.decoderSpecificInfo ?? []
        XCTAssertEqual(config.map { hex2($0) }.joined(), stream["extradata"] as? String, "\(context) extradata")
        let firstKept = ours.packets.first { $0.pts + $0.duration > 0 }
        XCTAssertEqual(max(0, firstKept?.pts ?? 0), Int64(try XCTUnwrap(stream["start_pts"] as? Int)),
                       "\(context) start")

        // Duration and edit list, in seconds.
        let movieTimescale = Double(ours.movie.header.timescale)
        let edits = track.editList?.entries ?? []
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
        let durationTicks = edits.isEmpty ? track.mediaHeader.duration
            : rescale(edits.reduce(0) { $0 + $1.segmentDuration }, from: ours.movie.header.timescale,
                      to: track.mediaHeader.timescale) ?? 0
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
        ]
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
}

private func hex2(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return text.count == 1 ? "0" + text : text
}

private func hex8(_ value: UInt32) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: 8 - text.count) + text
}
