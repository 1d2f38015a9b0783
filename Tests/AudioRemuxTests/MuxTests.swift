import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// Music under a video: the video copied untouched, the clips back to back, cut to the
/// sample at the video's end by the edit list.
final class MuxTests: XCTestCase {
    let directory = TemporaryDirectory()
    let video = fixture("aac-h264-faststart.mp4")  // 3.000 s of H.264 at 25 fps, with AAC

    override func tearDown() {
        directory.remove()
    }

    /// A clip of `count` AAC-like packets at 44.1 kHz: 1024 priming samples, presenting
    /// `presentedMilliseconds`.
    func clip(_ name: String, count: Int, presentedMilliseconds: UInt64, config: [UInt8] = [0x12, 0x10]) -> String {
        var synthetic = SyntheticMovie(sampleCount: count)
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: presentedMilliseconds, mediaTime: 1024)])
        synthetic.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [SyntheticMovie.esds(objectType: 0x40, config: config)])]
        return directory.write(name, synthetic.build())
    }

    func mux(_ clips: [String], _ options: MuxOptions = MuxOptions()) throws -> (MuxResult, [UInt8]) {
        let output = directory.file("out-\(UUID().uuidString).mp4")
        let result = try BackgroundMusic.mux(video: video, music: clips, to: output, options: options)
        return (result, readFile(output))
    }

    /// Raw packets of a track, edit list ignored (as `ffprobe -ignore_editlist 1` shows them).
    func rawPackets(_ path: String, bytes: [UInt8]? = nil, handler: FourCC = .soun, index: Int = 0) throws
        -> [DemuxedTrack.Packet]
    {
        let track = try DemuxedTrack(path: path, bytes: bytes ?? readFile(path), handler: handler, index: index)
        let shift = track.track.editList?.entries.first(where: { !$0.isEmpty })?.mediaTime ?? 0
        return track.packets.map { packet in
            var raw = packet
            raw.pts += shift
            raw.dts += shift
            return raw
        }
    }

    func sizesAndCRCs(_ packets: [DemuxedTrack.Packet]) -> [String] { packets.map { "\($0.size)/\($0.crc)" } }

    func testClipsBackToBackCutAtTheVideosEnd() throws {
        let first = clip("a.m4a", count: 60, presentedMilliseconds: 1300)  // 57330 ticks after priming
        let second = clip("b.m4a", count: 50, presentedMilliseconds: 1100)  // 48510 ticks
        let third = clip("c.m4a", count: 80, presentedMilliseconds: 1800)
        // The default: one edit over packet seams (issue 12).
        let (packetSeams, packetBytes) = try mux([first, second, third])
        XCTAssertEqual(packetSeams.clips.map(\.plays), [1, 1, 1])
        XCTAssertEqual(try DemuxedTrack(path: "out", bytes: packetBytes).track.editList?.entries,
                       [.init(segmentDuration: 132300, mediaTime: 1024)])
        // --exact-seams: the sample-exact layout, an edit per clip (pinned here on purpose).
        let (result, bytes) = try mux([first, second, third], MuxOptions(exactSeams: true))
        XCTAssertEqual(result.clipsPlaced, 3)
        XCTAssertEqual(result.musicDuration, result.videoDuration, accuracy: 0.001)

        // Video: every packet as in the input.
        let output = directory.write("check.mp4", bytes)
        XCTAssertEqual(try DemuxedTrack(path: output, bytes: bytes, handler: .vide).packets,
                       try DemuxedTrack(path: video, bytes: readFile(video), handler: .vide).packets)

        // Audio: the packets of a, b and c that their edits present (each clip's priming
        // packet and the packet holding its last presented sample included), c cut at 3.000 s.
        let music = try DemuxedTrack(path: output, bytes: bytes)
        let a = try rawPackets(first), b = try rawPackets(second), c = try rawPackets(third)
        let thirdNeeded: Int = 132300 - 57330 - 48510  // 26460 ticks after c's priming
        let counts: [Int] = [57330, 48510, thirdNeeded].map { (1024 + $0 + 1023) / 1024 }  // 57, 49, 27
        XCTAssertEqual(sizesAndCRCs(try rawPackets(output, bytes: bytes)),
                       sizesAndCRCs(Array(a.prefix(counts[0])) + Array(b.prefix(counts[1])) + Array(c.prefix(counts[2]))))
        let expectedEdits: [EditListBox.Entry] = [
            EditListBox.Entry(segmentDuration: 57330, mediaTime: 1024),
            EditListBox.Entry(segmentDuration: 48510, mediaTime: 59392),  // after a's 57 packets
            EditListBox.Entry(segmentDuration: UInt64(thirdNeeded), mediaTime: 109568),  // after 57 + 49
        ]
        XCTAssertEqual(music.track.editList?.entries, expectedEdits)
        XCTAssertEqual(music.movie.header.timescale, 44100, "the movie timescale is the audio's: edits are exact")
        XCTAssertEqual(music.table.boxes.timeToSample.entries,
                       [.init(sampleCount: 133, sampleDelta: 1024)], "no broken stts at the seams")
    }

    func testClipLongerThanTheVideoIsCutByTheEdit() throws {
        let long = clip("long.m4a", count: 200, presentedMilliseconds: 4500)
        let (result, bytes) = try mux([long])
        XCTAssertEqual(result.clipsPlaced, 1)
        let music = try DemuxedTrack(path: "out", bytes: bytes)
        XCTAssertEqual(music.track.editList?.entries, [.init(segmentDuration: 132300, mediaTime: 1024)])
        XCTAssertEqual(music.packets.count, (1024 + 132300 + 1023) / 1024, "the last packet is kept, the edit cuts it")
    }

    func testLoopRepeatsTheClipsUntilTheVideoEnds() throws {
        let short = clip("short.m4a", count: 40, presentedMilliseconds: 800)  // 35280 ticks
        let (looped, loopedBytes) = try mux([short], MuxOptions(loop: true))
        XCTAssertEqual(looped.clips.map(\.plays), [4], "one clip, looped 4 times")
        XCTAssertEqual(try DemuxedTrack(path: "out", bytes: loopedBytes).track.editList?.entries,
                       [.init(segmentDuration: 132300, mediaTime: 1024)], "one edit")
        let (result, bytes) = try mux([short], MuxOptions(loop: true, exactSeams: true))
        XCTAssertEqual(result.clipsPlaced, 4)
        let edits = try XCTUnwrap(try DemuxedTrack(path: "out", bytes: bytes).track.editList?.entries)
        XCTAssertEqual(edits.map(\.segmentDuration), [35280, 35280, 35280, 132300 - 3 * 35280])
        // Each pass holds the 36 packets that present 1024 + 35280 ticks.
        XCTAssertEqual(edits.map(\.mediaTime), [1024, 37888, 74752, 111616])
        let (once, _) = try mux([short])
        XCTAssertEqual(once.clipsPlaced, 1)
        XCTAssertEqual(once.musicDuration, 0.8, accuracy: 0.0001, "without --loop the music just ends")
    }

    func testOffsetStartsTheMusicLaterWithAnEmptyEdit() throws {
        let long = clip("long.m4a", count: 200, presentedMilliseconds: 4500)
        let (_, bytes) = try mux([long], MuxOptions(musicOffset: 1.0))
        let edits = try XCTUnwrap(try DemuxedTrack(path: "out", bytes: bytes).track.editList?.entries)
        XCTAssertEqual(edits, [.init(segmentDuration: 44100, mediaTime: -1), .init(segmentDuration: 88200, mediaTime: 1024)])
    }

    func testKeepOriginalAudioAsADisabledAlternative() throws {
        let long = clip("long.m4a", count: 200, presentedMilliseconds: 4500)
        let (_, bytes) = try mux([long], MuxOptions(keepOriginalAudio: true))
        let movie = try Movie(reading: MemoryByteSource(bytes))
        XCTAssertEqual(movie.tracks.map(\.handlerType), [.vide, .soun, .soun])
        XCTAssertEqual(movie.tracks.map(\.trackID), [1, 2, 3])
        XCTAssertEqual(movie.tracks.map(\.header.isEnabled), [true, true, false])
        XCTAssertEqual(movie.tracks[1].header.alternateGroup, movie.tracks[2].header.alternateGroup)
        XCTAssertEqual(try DemuxedTrack(path: "out", bytes: bytes, index: 1).packets,
                       try DemuxedTrack(path: video, bytes: readFile(video)).packets)
    }

    func testClipsCodedDifferentlyAreRefused() {
        let stereo = clip("stereo.m4a", count: 40, presentedMilliseconds: 800)
        let mono = clip("mono.m4a", count: 40, presentedMilliseconds: 800, config: [0x12, 0x08])
        XCTAssertThrowsError(try mux([stereo, mono])) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .incompatibleClips)
            XCTAssertTrue("\($0)".contains("mono.m4a"), "\($0)")
        }
    }

    func testErrors() throws {
        let music = clip("m.m4a", count: 40, presentedMilliseconds: 800)
        XCTAssertThrowsError(try BackgroundMusic.mux(video: music, music: [music], to: directory.file("x.mp4"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .noVideoTrack)
        }
        XCTAssertThrowsError(try BackgroundMusic.mux(video: video, music: [fixture("video-only.mp4")],
                                                     to: directory.file("x.mp4"))) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .noAudioTrack)
        }
        let existing = directory.write("exists.mp4", [1, 2, 3])
        XCTAssertThrowsError(try BackgroundMusic.mux(video: video, music: [music], to: existing)) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .destinationExists)
        }
        XCTAssertEqual(readFile(existing), [1, 2, 3])
        XCTAssertFalse(directory.contents.contains { $0.hasPrefix("x.mp4") || $0.contains(".extract-audio-") })
    }
}

/// The library form's progress and cancellation (issue 12).
final class MuxProgressTests: XCTestCase {
    let directory = TemporaryDirectory()
    let video = fixture("aac-h264-faststart.mp4")

    override func tearDown() {
        directory.remove()
    }

    func clip() -> String {
        var synthetic = SyntheticMovie(sampleCount: 200)
        synthetic.editList = EditListBox(entries: [.init(segmentDuration: 4500, mediaTime: 1024)])
        synthetic.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [SyntheticMovie.esds(objectType: 0x40,
                                                                                            config: [0x12, 0x10])])]
        return directory.write("clip.m4a", synthetic.build())
    }

    func testProgressGrowsToTheTotal() throws {
        var reports: [RemuxProgress] = []
        let output = directory.file("out.mp4")
        let result = try BackgroundMusic.mux(video: video, music: [clip()], to: output,
                                             progress: { reports.append($0) })
        XCTAssertFalse(reports.isEmpty)
        XCTAssertEqual(zip(reports, reports.dropFirst()).filter { $0.bytesDone > $1.bytesDone }.count, 0)
        XCTAssertEqual(reports.last?.bytesDone, reports.last?.bytesTotal)
        XCTAssertGreaterThan(reports.last?.bytesTotal ?? 0, 0)
        XCTAssertLessThan(reports.last?.bytesTotal ?? .max, result.bytesWritten, "sample bytes, boxes not counted")
        XCTAssertEqual(reports.last?.fractionCompleted, 1)
    }

    func testCancellationLeavesNothingBehind() throws {
        let output = directory.file("cancelled.mp4")
        XCTAssertThrowsError(try BackgroundMusic.mux(video: video, music: [clip()], to: output,
                                                     isCancelled: { true })) {
            XCTAssertEqual(($0 as? RemuxError)?.code, .cancelled)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.contains("cancelled") }, [])
    }

    func testAsyncFormHonoursTaskCancellation() async throws {
        let output = directory.file("task.mp4")
        let music = clip()
        let video = video
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BackgroundMusic.mux(video: video, music: [music], to: output)
        }
        do {
            _ = try await task.value
            XCTFail("a cancelled task wrote the file")
        } catch {
            XCTAssertEqual((error as? RemuxError)?.code, .cancelled)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        let result = try await BackgroundMusic.mux(video: video, music: [music], to: output)
        XCTAssertEqual(result.clips.map(\.plays), [1])
    }
}
