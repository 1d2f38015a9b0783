import Foundation
import TestSupport
import XCTest

/// `extract-audio package` (issue 31): the folder written, read back by FFmpeg's hls and
/// dash demuxers (never by our parser), and what is refused with nothing left behind.
final class PackageCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg", "ffprobe"])
    }

    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    /// 6 s of H.264 with B-frames (a key frame every second) and AAC, made by ffmpeg.
    func makeInput() throws -> String {
        let path = directory.file("in.mp4")
        let run = try runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                                         "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "6", "-c:v", "libx264",
                                         "-bf", "2", "-g", "25", "-c:a", "aac", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    /// Per stream kind, the packets' sizes and CRCs as ffmpeg's framecrc gives them.
    func packets(_ path: String, _ kind: String, ignoringEdits: Bool = false) throws -> [String] {
        let run = try runTool("ffmpeg", ["-v", "error"] + (ignoringEdits ? ["-ignore_editlist", "1"] : [])
                                  + ["-i", path, "-map", "0:\(kind)", "-c", "copy", "-f", "framecrc", "-"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: ",").suffix(2).joined(separator: ",")
        }
    }

    func testPackagesEveryPacketForHLSAndDASH() throws {
        let input = try makeInput()
        let output = directory.file("out")
        let run = try runCLI(["package", input, output, "--segment-duration", "2", "--iframes", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["target_duration"] as? Int, 2)
        let tracks = try XCTUnwrap(report["tracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.map { $0["segments"] as? Int }, [3, 3])
        let names = try FileManager.default.contentsOfDirectory(atPath: output)
        for name in ["master.m3u8", "manifest.mpd", "track1.m3u8", "track1_iframes.m3u8", "track1_init.mp4",
                     "track1_3.m4s", "track2.m3u8", "track2_init.mp4", "track2_3.m4s"] {
            XCTAssertTrue(names.contains(name), "\(name) missing: \(names)")
        }
        for kind in ["v", "a"] {
            let source = try packets(input, kind, ignoringEdits: true)
            XCTAssertFalse(source.isEmpty)
            XCTAssertEqual(try packets(output + "/master.m3u8", kind), source, "hls, \(kind)")
        }
        // The dash demuxer resolves segment names against the working folder: run it from there.
        let dash = Process()
        dash.executableURL = URL(fileURLWithPath: try oraclePath("ffmpeg"))
        dash.arguments = ["-v", "error", "-i", "manifest.mpd", "-map", "0:v", "-c", "copy", "-f", "framecrc", "-"]
        dash.currentDirectoryURL = URL(fileURLWithPath: output)
        let pipe = Pipe()
        dash.standardOutput = pipe
        try dash.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        dash.waitUntilExit()
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: ",").suffix(2).joined(separator: ",")
        }
        XCTAssertEqual(lines, try packets(input, "v", ignoringEdits: true), "dash, video")
        let master = try String(contentsOfFile: output + "/master.m3u8", encoding: .utf8)
        // CODECS against ffprobe's profile (High: 0x64, constraint byte 0) and level.
        let level = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=profile,level",
                                            "-of", "csv=p=0", input]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = level.split(separator: ",")
        XCTAssertEqual(fields.first, "High")
        let levelHex = String(Int(fields.last ?? "") ?? 0, radix: 16)
        let avc = "avc1.6400" + (levelHex.count == 1 ? "0" : "") + levelHex
        XCTAssertTrue(master.contains("CODECS=\"\(avc),mp4a.40.2\""), master)
        XCTAssertTrue(master.contains("FRAME-RATE=25.000"), master)
        XCTAssertTrue(master.contains("#EXT-X-I-FRAME-STREAM-INF:"), master)
    }

    /// `VIDEO-RANGE` against ffprobe's `color_transfer` (smpte2084: PQ, arib-std-b67: HLG,
    /// bt709: left out): HDR-flagged H.264 and HEVC from x264/x265 (VUI in the SPS) with the
    /// `colr` FFmpeg writes, and with that box renamed `free` so that only the SPS says it.
    func testVideoRangeFollowsTheTransferFunction() throws {
        let cases: [(name: String, codec: [String], transfer: String, keepColourBox: Bool, range: String?)] = [
            ("pq264", ["-c:v", "libx264", "-pix_fmt", "yuv420p10le"], "smpte2084", true, "PQ"),
            ("pq264-vui", ["-c:v", "libx264"], "smpte2084", false, "PQ"),
            ("hlg265", ["-c:v", "libx265", "-tag:v", "hvc1"], "arib-std-b67", true, "HLG"),
            ("hlg265-vui", ["-c:v", "libx265", "-tag:v", "hev1"], "arib-std-b67", false, "HLG"),
            ("sdr264", ["-c:v", "libx264"], "bt709", true, nil),
        ]
        for item in cases {
            let path = directory.file(item.name + ".mp4")
            let colour = item.transfer == "bt709" ? ["-color_primaries", "bt709", "-colorspace", "bt709"]
                : ["-color_primaries", "bt2020", "-colorspace", "bt2020nc"]
            let made = try runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                                              "-t", "2", "-x265-params", "log-level=error"] + item.codec
                                       + ["-color_trc", item.transfer] + colour + [path])
            XCTAssertEqual(made.status, 0, made.stderr)
            if !item.keepColourBox {
                var bytes = readFile(path)
                let colr = Array("colr".utf8)
                let at = try XCTUnwrap((0...(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == colr }, item.name)
                bytes.replaceSubrange(at..<at + 4, with: Array("free".utf8))
                XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            }
            let probe = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                "stream=color_transfer", "-of", "csv=p=0", path])
            XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), item.transfer, item.name)
            let output = directory.file(item.name + "-out")
            let run = try runCLI(["package", path, output, "--iframes", "--quiet"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let master = try String(contentsOfFile: output + "/master.m3u8", encoding: .utf8)
            let variants = master.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-STREAM-INF:")
                || $0.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") }
            XCTAssertEqual(variants.count, 2, master)
            for line in variants {
                let attributes = line.split(separator: ":", maxSplits: 1).last?.split(separator: ",") ?? []
                XCTAssertEqual(attributes.filter { $0.hasPrefix("VIDEO-RANGE=") },
                               item.range.map { ["VIDEO-RANGE=\($0)"] } ?? [], "\(item.name): \(line)")
            }
        }
    }

    func testSingleFileHoldsEverySegmentByRange() throws {
        let input = try makeInput()
        let output = directory.file("single")
        let run = try runCLI(["package", input, output, "--segment-duration", "2", "--single-file", "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output).sorted(),
                       ["manifest.mpd", "master.m3u8", "track1.m3u8", "track1.mp4", "track2.m3u8", "track2.mp4"])
        let playlist = try String(contentsOfFile: output + "/track1.m3u8", encoding: .utf8)
        XCTAssertTrue(playlist.contains("#EXT-X-MAP:URI=\"track1.mp4\",BYTERANGE=\""), playlist)
        XCTAssertEqual(playlist.components(separatedBy: "#EXT-X-BYTERANGE:").count - 1, 3, playlist)
        for kind in ["v", "a"] {
            XCTAssertEqual(try packets(output + "/master.m3u8", kind), try packets(input, kind, ignoringEdits: true),
                           "hls, \(kind)")
        }
    }

    func testAnExistingFolderOrABrokenInputLeavesNothingBehind() throws {
        let input = try makeInput()
        let output = directory.file("out")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        _ = directory.write("out/notes.txt", Array("mine".utf8))
        for arguments in [["package", input, output], ["package", input, output, "--overwrite"]] {
            let run = try runCLI(arguments)
            XCTAssertEqual(run.status, 73, run.stderr)
            XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, run.stderr)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output), ["notes.txt"])
        }
        let broken = directory.write("broken.mp4", Array("not a movie at all".utf8))
        let run = try runCLI(["package", broken, directory.file("fresh")])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(),
                       ["broken.mp4", "in.mp4", "out"], "no folder and no temporary folder left")
        XCTAssertEqual(try runCLI(["package", input]).status, 64)
    }
}
