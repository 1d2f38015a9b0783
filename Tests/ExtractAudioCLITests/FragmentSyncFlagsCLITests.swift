import Foundation
import TestSupport
import XCTest

/// Sample flags that call every sample sync (issue 32, point 4: a Smooth Streaming track marks
/// its samples so): in fragments the flags come from `trun`, `tfhd` and `trex`, not `stss`.
/// A cut must still start decoding at a key frame by the bitstream. The oracle is FFmpeg's
/// decode: the cut's frames are the source's, from the frame presented at `--from`.
final class FragmentSyncFlagsCLITests: XCTestCase {
    override func setUpWithError() throws {
        try requireOracles(["ffmpeg"])
    }

    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    /// MD5 of each decoded video frame (FFmpeg), in presentation order.
    func frames(_ path: String) throws -> [String] {
        try runTool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"]).stdout
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "") }
    }

    /// frag-keyframe.mp4 (a key frame every 10 frames, ffprobe: 5 of 50) with the video's
    /// `tfhd` default_sample_flags set to 0x02000000 (sync, depends on no other): every sample
    /// but the firsts of the runs, which carry their own flags, now claims to be sync. A cut
    /// from 0.48 s (frame 12, a P frame) must start decoding at frame 10, the key frame by the
    /// bitstream, say the marks are wrong, and FFmpeg then decodes exactly frames 12–17.
    func testCutStartsAtABitstreamKeyFrameWhereFragmentFlagsCallEverySampleSync() throws {
        var bytes = readFile(fixture("frag-keyframe.mp4"))
        let tfhd = Array("tfhd".utf8)
        var patched = 0
        var at = 4
        while at + 4 <= bytes.count {
            defer { at += 1 }
            guard Array(bytes[at..<(at + 4)]) == tfhd else { continue }
            let payload = at + 4
            let flags = Int(bytes[payload + 1]) << 16 | Int(bytes[payload + 2]) << 8 | Int(bytes[payload + 3])
            let track = bytes[(payload + 4)..<(payload + 8)].reduce(0) { $0 << 8 | Int($1) }
            guard track == 1, flags & 0x20 != 0 else { continue }
            var field = payload + 8
            for (bit, size) in [(0x1, 8), (0x2, 4), (0x8, 4), (0x10, 4)] where flags & bit != 0 { field += size }
            bytes.replaceSubrange(field..<(field + 4), with: [0x02, 0, 0, 0])
            patched += 1
        }
        XCTAssertGreaterThan(patched, 1, "the video's tfhd boxes carry default flags")
        let input = directory.write("all-sync.mp4", bytes)
        let output = directory.file("cut.mp4")
        let run = try runCLI(["remux", input, output, "--from", "0.48", "--to", "0.72"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("sync marks are wrong"), run.stderr)
        XCTAssertEqual(try frames(output), Array(try frames(fixture("frag-keyframe.mp4"))[12..<18]))
    }
}
