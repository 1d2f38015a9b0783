import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Issue 13, point 1: an m4a without an edit list whose `iTunSMPB` item states its priming
/// and valid samples (as iTunes, afconvert and qaac write) is presented as Apple's players
/// present it, and the extracted file carries that as an edit list. Checked with the
/// readers: ffprobe's stream duration, and GStreamer's decoded audio.
final class GaplessItemTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    static let priming: UInt64 = 3622
    static let padding: UInt64 = 501

    /// The `----` item `com.apple.iTunes` / `iTunSMPB`, as iTunes writes it (data type 1,
    /// UTF-8), or with another data type.
    static func gaplessItem(valid: UInt64, dataType: UInt32 = 1) -> [UInt8] {
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: digits - text.count) + text
        }
        let text = " 00000000 \(hex(priming, 8)) \(hex(padding, 8)) \(hex(valid, 16))"
            + String(repeating: " 00000000", count: 8)
        var w = BoxWriter()
        w.box("----") { item in
            item.fullBox("mean", version: 0, flags: 0) { $0.write(bytes: Array("com.apple.iTunes".utf8)) }
            item.fullBox("name", version: 0, flags: 0) { $0.write(bytes: Array("iTunSMPB".utf8)) }
            item.fullBox("data", version: 0, flags: dataType) { data in
                data.write(UInt32(0))
                data.write(bytes: Array(text.utf8))
            }
        }
        return w.bytes
    }

    /// An AAC m4a made by FFmpeg without an edit list (`-use_editlist 0`), whose `©cmt`
    /// item (sized to match) is overwritten in place by an `iTunSMPB` item stating priming
    /// 3622 and padding 501 around the rest of the media, in a `data` box of `dataType`.
    /// Returns the path and the valid sample count.
    func makeInput(dataType: UInt32 = 1) throws -> (path: String, valid: UInt64, total: UInt64) {
        let plain = directory.file("plain.m4a")
        // The item is 188 bytes: a ©cmt item of 24 + 164 bytes of text has its size.
        guard let made = try HostileMetadataTests.run("ffmpeg", [
            "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2",
            "-c:a", "aac", "-b:a", "96k", "-use_editlist", "0", "-metadata",
            "comment=" + String(repeating: "x", count: 164), plain,
        ]) else { throw missingOracle("ffmpeg") }
        XCTAssertEqual(made.status, 0, made.stderr)
        // What the media holds, as FFmpeg counts it (no edit list applied).
        let packets = try XCTUnwrap(HostileMetadataTests.run("ffprobe", [
            "-v", "error", "-ignore_editlist", "1", "-show_entries", "packet=duration", "-of", "csv=p=0", plain,
        ]))
        let total = packets.stdout.split(separator: "\n").compactMap { UInt64($0) }.reduce(0, +)
        let valid = total - Self.priming - Self.padding
        var bytes = readFile(plain)
        let item = Self.gaplessItem(valid: valid, dataType: dataType)
        XCTAssertEqual(item.count, 188)
        let comment: [UInt8] = [0, 0, 0, 188, 0xA9, 0x63, 0x6D, 0x74]  // size 188, '©cmt'
        let at = try XCTUnwrap((0...(bytes.count - 8)).first { Array(bytes[$0..<($0 + 8)]) == comment })
        bytes.replaceSubrange(at..<(at + 188), with: item)
        XCTAssertFalse(bytes.indices.dropLast(4).contains { Array(bytes[$0..<($0 + 4)]) == Array("edts".utf8) },
                       "the input must have no edit list")
        return (directory.write("smpb-\(dataType).m4a", bytes), valid, total)
    }

    /// Issue 20, point 1: an item written with data type 0 (implicit), as some encoders
    /// write it, was ignored (only type 1 was read): `probe` showed no text, and extraction
    /// presented the 3622 priming samples and the padding as audio. Oracle: GStreamer, which
    /// does not read `iTunSMPB` but plays the edit list, decodes only the valid samples.
    func testITunSMPBOfDataTypeZeroIsRead() throws {
        let input = try makeInput(dataType: 0)
        let probe = try runCLI(["probe", "--json", input.path])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
        let items = json?["metadata"] as? [[String: Any]] ?? []
        let item = items.first { $0["key"] as? String == "----:com.apple.iTunes:iTunSMPB" }
        let text = item?["text"] as? String
        XCTAssertTrue(text?.hasPrefix(" 00000000 00000E26 000001F5 ") == true, "\(items)")

        let output = directory.file("type0.m4a")
        let run = try runCLI([input.path, output])
        XCTAssertEqual(run.status, 0, run.stderr)
        let raw = directory.file("type0.raw")
        guard let gst = try HostileMetadataTests.run("gst-launch-1.0", [
            "-q", "filesrc", "location=\(output)", "!", "qtdemux", "!", "decodebin", "!", "audioconvert", "!",
            "audio/x-raw,format=S16LE", "!", "filesink", "location=\(raw)",
        ]) else { return XCTFail("gst-launch-1.0 is required") }
        XCTAssertEqual(gst.status, 0, gst.stderr)
        // As in the test above: no more than the valid samples, less at most the last two
        // packets GStreamer drops at a segment end inside a packet. The whole media is
        // 3622 + 501 samples longer.
        let decoded = UInt64(readFile(raw).count / 2)
        XCTAssertLessThanOrEqual(decoded, input.valid, "the priming or padding is played")
        XCTAssertGreaterThan(decoded + 3 * 1024, input.valid)
    }

    func testITunSMPBWithoutEditListBecomesTheOutputsEditList() throws {
        let input = try makeInput()
        for (name, extra) in [("out.m4a", [String]()), ("bare.m4a", ["--no-metadata"])] {
            let output = directory.file(name)
            let run = try runCLI(extra + [input.path, output])
            XCTAssertEqual(run.status, 0, run.stderr)
            // FFmpeg applies the output's edit list: it presents the valid samples, from 0.
            let probe = try XCTUnwrap(HostileMetadataTests.run("ffprobe", [
                "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=start_time,duration_ts,time_base",
                "-of", "default=nw=1", output,
            ]))
            XCTAssertEqual(probe.status, 0, probe.stderr)
            XCTAssertTrue(probe.stdout.contains("duration_ts=\(input.valid)\n"), "\(name): \(probe.stdout)")
            XCTAssertTrue(probe.stdout.contains("start_time=0.000000\n"), "\(name): \(probe.stdout)")
            XCTAssertTrue(probe.stdout.contains("time_base=1/44100\n"), "\(name): \(probe.stdout)")

            // GStreamer applies it too: its first decoded audio is the first valid sample
            // (not the encoder delay), and it plays no more than the valid samples. (It
            // drops up to the last two packets at a segment end inside a packet, as it
            // does on FFmpeg's own files: hence the lower bound.)
            let raw = directory.file(name + ".raw")
            guard let gst = try HostileMetadataTests.run("gst-launch-1.0", [
                "-q", "filesrc", "location=\(output)", "!", "qtdemux", "!", "decodebin", "!", "audioconvert", "!",
                "audio/x-raw,format=S16LE", "!", "filesink", "location=\(raw)",
            ]) else { return XCTFail("gst-launch-1.0 is required") }
            XCTAssertEqual(gst.status, 0, gst.stderr)
            let decoded = UInt64(readFile(raw).count / 2)
            XCTAssertLessThanOrEqual(decoded, input.valid, name)
            XCTAssertGreaterThan(decoded + 3 * 1024, input.valid, name)
            let first = try XCTUnwrap(HostileMetadataTests.run("gst-launch-1.0", [
                "-v", "filesrc", "location=\(output)", "!", "qtdemux", "!", "decodebin", "!", "audioconvert", "!",
                "identity", "silent=false", "!", "fakesink",
            ]))
            // The first buffer's time: the priming, 3622 / 44100 s = 0.082131519 s.
            let chain = first.stdout.split(separator: "\n").first { $0.contains("chain") } ?? ""
            XCTAssertTrue(chain.contains("pts: 0:00:00.082131519"), "\(name): \(chain)")
        }
    }

    /// remux and mux carry the same presentation: the remuxed file's edit list presents the
    /// valid samples (ffprobe's duration_ts), and a mux of the clip under a longer video
    /// plays exactly its valid samples (its one edit). They used to write no edit (remux)
    /// and to read the edit's duration, counted in samples, as movie ticks (mux: the padding
    /// was kept).
    func testRemuxAndMuxPresentTheValidSamples() throws {
        let input = try makeInput()
        XCTAssertEqual(try TrackPresentationProbe.edits(input.path).first?.segmentDuration, input.valid)
        let remuxed = directory.file("remuxed.m4a")
        let remux = try runCLI(["remux", input.path, remuxed])
        XCTAssertEqual(remux.status, 0, remux.stderr)
        let probe = try runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                            "stream=start_time,duration_ts,time_base", "-of", "default=nw=1", remuxed])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertTrue(probe.stdout.contains("duration_ts=\(input.valid)\n"), probe.stdout)
        XCTAssertTrue(probe.stdout.contains("start_time=0.000000\n"), probe.stdout)

        // Under a 3 s video the 2 s clip plays once: exactly its valid samples, after the priming.
        let muxed = directory.file("muxed.mp4")
        let mux = try runCLI(["mux", "--json", fixture("aac-h264-faststart.mp4"), "--audio", input.path, muxed])
        XCTAssertEqual(mux.status, 0, mux.stderr)
        let edits = try TrackPresentationProbe.edits(muxed, kind: .audio)
        let reader = try MovieReader(reading: MemoryByteSource(readFile(muxed)))
        let movieTimescale = reader.movie.header.timescale
        let presented = edits.reduce(UInt64(0)) { $0 + $1.segmentDuration }
        let music = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        XCTAssertEqual(rescale(presented, from: movieTimescale, to: music.timescale), input.valid, "\(edits)")
        XCTAssertEqual(edits.last?.mediaTime, Int64(Self.priming), "\(edits)")
    }

    /// The reader applies the same rule: one edit, in the media timescale.
    func testReaderPresentsTheValidSamples() throws {
        let input = try makeInput()
        let reader = try MovieReader(reading: MemoryByteSource(readFile(input.path)))
        let track = try XCTUnwrap(reader.tracks.first { $0.kind == .audio })
        let samples = try reader.samples(of: track)
        XCTAssertEqual(samples.endDecodeTime - samples.firstDecodeTime, input.total)
        let presentation = reader.presentation(of: track, samples: samples)
        XCTAssertEqual(presentation.edits, [.init(segmentDuration: input.valid, mediaTime: Int64(Self.priming))])
        XCTAssertTrue(presentation.isFromGaplessInfo)
    }
}

/// The edit list of a file's first track of `kind`, as our reader reads it from the file.
enum TrackPresentationProbe {
    static func edits(_ path: String, kind: TrackKind = .audio) throws -> [EditListBox.Entry] {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(path)))
        guard let track = reader.tracks.first(where: { $0.kind == kind }) else { return [] }
        let samples = try reader.samples(of: track)
        let presentation = reader.presentation(of: track, samples: samples)
        return track.editList?.entries ?? presentation.edits
    }
}
