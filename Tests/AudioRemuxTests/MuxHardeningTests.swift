@testable import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `mux` against inputs whose claimed durations are far out of proportion with what they
/// hold (issue 11, points 2, 17, 18 and 20): the work and the memory follow the samples
/// really present, and absurd timing is refused before anything is built.
final class MuxHardeningTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// A "video" of two samples (an H.264 decoder is not needed to mux) whose media
    /// timescale is 1 tick per second, so that one `stts` delta can claim `gap` seconds.
    func gappedVideo(gap: UInt32) -> [UInt8] {
        var synthetic = SyntheticMovie(sampleCount: 2)
        synthetic.handler = .vide
        synthetic.editList = nil
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 1, sampleDelta: gap),
                                                           .init(sampleCount: 1, sampleDelta: 1)])
        return Self.settingMediaTimescale(1, in: synthetic.build())
    }

    /// `mdhd` (version 0) holds its timescale 12 bytes after its version and flags.
    static func settingMediaTimescale(_ timescale: UInt32, in bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let mdhd = Array("mdhd".utf8)
        guard let at = (0..<(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == mdhd }) else {
            XCTFail("no mdhd")
            return bytes
        }
        let field = at + 4 + 4 + 8
        for i in 0..<4 { bytes[field + i] = UInt8(truncatingIfNeeded: timescale >> (24 - 8 * i)) }
        return bytes
    }

    /// A clip of `count` AAC-like packets at 44.1 kHz with 1024 priming samples.
    func clip(count: Int, presentedMilliseconds: UInt64, timing: TimeToSampleBox? = nil) -> [UInt8] {
        var synthetic = SyntheticMovie(sampleCount: count)
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: presentedMilliseconds, mediaTime: 1024)])
        synthetic.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [SyntheticMovie.esds(objectType: 0x40,
                                                                                            config: [0x12, 0x10])])]
        if let timing { synthetic.timeToSample = timing }
        return synthetic.build()
    }

    /// A clip of empty packets is refused as extraction refuses one (the structured fuzzer's
    /// clip of 32 empty packets reached a writer bug that wrote an unreadable `stsz`).
    func testClipOfEmptyPacketsIsRefused() throws {
        var synthetic = SyntheticMovie(sampleCount: 2)
        synthetic.sampleSizes = Array(repeating: 0, count: 8)
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 8, sampleDelta: 1024)])
        synthetic.chunkOffsets = Array(repeating: 0, count: 4)
        let video = readFile(fixture("aac-h264-faststart.mp4"))
        XCTAssertThrowsError(try plan(video: video, clips: [synthetic.build()])) { error in
            let error = error as? RemuxError
            XCTAssertEqual(error?.code, .invalidInput, "\(String(describing: error))")
            XCTAssertTrue(error?.message.contains("is empty (size 0)") == true, "\(String(describing: error))")
        }
    }

    /// The structured fuzzer's video whose `avc1` entry holds an `stsd` of size 0: the mux
    /// copied the entry as it was, and FFmpeg refused the output ("Duplicate stsd"). The
    /// entry's children are now checked (CopiedTrack) and the output reads in FFmpeg.
    func testCopiedVideoEntryChildrenAreChecked() throws {
        let video = readFile(fixture("fuzz/structured-mux-avc1-stsd-inside-entry.mp4"))
        let output = directory.file("muxed.mp4")
        let plan = try self.plan(video: video, clips: [readFile(fixture("aac-h264-faststart.mp4"))])
        XCTAssertTrue(plan.dropped.contains { $0.contains("stsd/avc1/stsd") }, "\(plan.dropped)")
        var sink = MemoryByteSink()
        _ = try BackgroundMusic.mux(video: MemoryByteSource(video),
                                    music: [MemoryByteSource(readFile(fixture("aac-h264-faststart.mp4")))], to: &sink)
        XCTAssertEqual(directory.write("muxed.mp4", sink.data), output)
        let probe = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type",
                                                "-of", "csv=p=0", output])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertFalse(probe.stderr.contains("[mov,mp4"), probe.stderr)
        XCTAssertEqual(probe.stdout, "video\naudio\n")
    }

    func plan(video: [UInt8], clips: [[UInt8]], options: MuxOptions = MuxOptions()) throws -> MuxPlan {
        let inputs = [MemoryByteSource(video)] + clips.map { MemoryByteSource($0) }
        return try MuxPlan(inputs: inputs, names: ["video.mp4"] + clips.indices.map { "clip\($0 + 1).m4a" },
                           options: options)
    }

    /// Points 2 and 17: the interleaver walks the samples, not the timeline, so its steps
    /// are bounded by the sample count whatever gap the timing claims (before the fix it took
    /// one step per half second of the timeline: 2·10^8 for this video).
    func assertInterleavingFollowsTheSamples(gap: UInt32, file: StaticString = #filePath, line: UInt = #line) throws {
        let video = gappedVideo(gap: gap)
        XCTAssertLessThan(video.count, 1024, "a video of a few hundred bytes", file: file, line: line)
        let plan = try plan(video: video, clips: [clip(count: 40, presentedMilliseconds: 800)])
        let samples = (1...plan.writer.trackCount).reduce(0) { $0 + (plan.writer.table(of: UInt32($1))?.count ?? 0) }
        XCTAssertEqual(samples, 2 + 36, file: file, line: line)
        // The writer's Interleaver: its steps are bounded by the samples, not the timeline.
        XCTAssertLessThanOrEqual(plan.writer.progressiveLayout().interleaverSteps, 4 * samples + 4, file: file,
                                 line: line)

        // And the whole mux, in memory, writes a file that reads back with every sample.
        var sink = MemoryByteSink()
        let result = try BackgroundMusic.mux(video: MemoryByteSource(video),
                                             music: [MemoryByteSource(clip(count: 40, presentedMilliseconds: 800))],
                                             to: &sink)
        XCTAssertEqual(UInt64(sink.data.count), result.bytesWritten, file: file, line: line)
        let output = try Movie(reading: MemoryByteSource(sink.data))
        let counts = try output.tracks.map {
            try SampleTable(boxes: $0.sampleTable(), fileLength: output.fileLength,
                            excluding: [output.movieBoxRange]).sampleCount
        }
        XCTAssertEqual(counts, [2, 36], file: file, line: line)
    }

    func testInterleavingAHundredMillionSecondGapFollowsTheSamples() throws {
        try assertInterleavingFollowsTheSamples(gap: 100_000_000)
    }

    func testInterleavingTheLargest32BitGapFollowsTheSamples() throws {
        try assertInterleavingFollowsTheSamples(gap: 0xFFFF_FFFF)
    }

    /// Point 18: `--loop` over a 60 KB video whose edit list claims 2^32 ticks (49 days) is
    /// refused from the numbers alone, before any table is built (it used to grow 50 million
    /// samples, 1.2 GB, before refusing).
    /// Found by the mux fuzz target after the seam rebuild: clips whose packets advance the
    /// timeline by (almost) nothing made the seam planner loop without reaching the video's
    /// end, one piece per pass, until 2 GB. Passes are now capped (``1 << 19``).
    /// The input is the fuzz target's format: a flags byte, the video's 4-byte length and
    /// bytes, then the clip.
    func testClipsThatBarelyAdvanceTheMusicDoNotLoopForever() throws {
        let bytes = readFile(fixture("fuzz-mux/zero-progress-seams.bin"))
        let flags = bytes[0]
        let videoLength = min(bytes[1..<5].reduce(0) { $0 << 8 | Int($1) }, bytes.count - 5)
        let video = Array(bytes[5..<(5 + videoLength)])
        let clip = Array(bytes[(5 + videoLength)...])
        XCTAssertEqual(flags & 4, 0, "one clip")
        let options = MuxOptions(musicOffset: Double(flags >> 3) / 4, keepOriginalAudio: flags & 2 != 0,
                                 loop: flags & 1 != 0)
        var sink = MemoryByteSink()
        do {
            let result = try BackgroundMusic.mux(video: MemoryByteSource(video), music: [MemoryByteSource(clip)],
                                                 to: &sink, options: options)
            XCTAssertLessThanOrEqual(result.clipsPlaced, SeamPlanner.maximumPasses)
        } catch {
            // Refusing the input is as good as placing it within the cap.
        }
    }

    func testLoopingOverAClaimedDurationIsRefusedBeforeBuilding() throws {
        // Two frames that last 2^32 - 1 ticks each (at 44.1 kHz: 27 hours): what the media
        // holds, not an edit's claim (an edit is fitted to the media it presents).
        var synthetic = SyntheticMovie(sampleCount: 2)
        synthetic.handler = .vide
        synthetic.sampleSizes = [30000, 30000]
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 2, sampleDelta: UInt32.max)])
        synthetic.editList = nil
        let video = synthetic.build()
        XCTAssertLessThan(video.count, 61000)
        let music = clip(count: 40, presentedMilliseconds: 800)
        let before = Self.peakResidentBytes()
        XCTAssertThrowsError(try plan(video: video, clips: [music], options: MuxOptions(loop: true))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .invalidInput)
            XCTAssertTrue("\($0)".contains("loop"), "\($0)")
        }
        let grown = Self.peakResidentBytes() - before
        XCTAssertLessThan(grown, 64 << 20, "peak RSS grew by \(grown >> 20) MiB")
        // Without --loop the clip plays once: nothing to refuse.
        XCTAssertEqual(try plan(video: video, clips: [music]).clipsPlaced, 1)
    }

    /// A loop that stays within the cap still fills the video (3 h of video, a 0.8 s clip).
    func testLoopingALongVideoWithinTheCapFillsIt() throws {
        var synthetic = SyntheticMovie(sampleCount: 2)
        synthetic.handler = .vide
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 2, sampleDelta: 3 * 3600 * 44100 / 2)])
        synthetic.editList = nil
        let plan = try plan(video: synthetic.build(), clips: [clip(count: 40, presentedMilliseconds: 800)],
                            options: MuxOptions(loop: true))
        XCTAssertEqual(plan.clipsPlaced, 13500)
        XCTAssertEqual(plan.musicSeconds, 3 * 3600, accuracy: 0.001)
    }

    /// Point 20: a clip whose first packet claims 0xFFFFFC00 ticks (27 hours at 44.1 kHz)
    /// used to be muxed as that one packet (FFmpeg: "Error while decoding stream"); it is
    /// refused, naming the clip and the packet.
    func testClipWithAnAbsurdPacketDurationIsRefused() throws {
        var video = SyntheticMovie(sampleCount: 2)
        video.handler = .vide
        let timing = TimeToSampleBox(entries: [.init(sampleCount: 1, sampleDelta: 0xFFFF_FC00),
                                               .init(sampleCount: 39, sampleDelta: 1024)])
        let music = clip(count: 40, presentedMilliseconds: 800, timing: timing)
        XCTAssertThrowsError(try plan(video: video.build(), clips: [music])) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .invalidInput)
            XCTAssertTrue("\($0)".contains("clip1.m4a"), "\($0)")
            XCTAssertTrue("\($0)".contains("packet 1 "), "\($0)")
        }
    }

    /// A video whose edit list overflows 64 bits (two edits of 2^63 ticks) is presented whole,
    /// its edit list dropped, as extraction treats such an edit (point 16's rule): the sum
    /// used to wrap, and the edits were copied as they were.
    func testVideoEditsThatOverflowAreDroppedAndTheVideoPresentedWhole() throws {
        var synthetic = SyntheticMovie(sampleCount: 2)
        synthetic.handler = .vide
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 1 << 63, mediaTime: 0),
                                                   .init(segmentDuration: 1 << 63, mediaTime: 0)])
        var sink = MemoryByteSink()
        let result = try BackgroundMusic.mux(video: MemoryByteSource(synthetic.build()),
                                             music: [MemoryByteSource(clip(count: 40, presentedMilliseconds: 800))],
                                             to: &sink)
        XCTAssertEqual(result.videoDuration, 2048.0 / 44100, accuracy: 1e-6, "the media's two packets of 1024 ticks")
        let output = try Movie(reading: MemoryByteSource(sink.data))
        XCTAssertNil(output.tracks[0].editList)
        XCTAssertEqual(output.tracks[0].header.duration, 2048)
    }

    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}

