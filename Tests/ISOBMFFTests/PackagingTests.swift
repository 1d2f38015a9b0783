import ISOBMFF
import TestSupport
import XCTest

/// The pure parts of `package` (issue 31): RFC 6381 strings from configuration bytes, the
/// segment plan, and the text of the HLS playlists and the DASH manifest.
final class PackagingTests: XCTestCase {
    // MARK: CODECS

    /// A visual sample entry of `format` whose only child is `box` (78 bytes of fields).
    func visual(_ format: FourCC, _ box: FourCC, _ payload: [UInt8]) -> SampleDescription {
        var w = BoxWriter()
        w.box(format) { w in
            w.write(bytes: [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 16))
            w.write(UInt16(320))
            w.write(UInt16(240))
            w.write(UInt32(0x0048_0000))
            w.write(UInt32(0x0048_0000))
            w.write(UInt32(0))
            w.write(UInt16(1))
            w.write(bytes: [UInt8](repeating: 0, count: 32))
            w.write(UInt16(0x18))
            w.write(Int16(-1))
            w.box(box) { $0.write(bytes: payload) }
        }
        return SampleDescription(entry: SampleDescriptionBox.Entry(format: format, bytes: w.bytes), kind: .video,
                                 quickTimeLayout: false)
    }

    func audio(_ entry: [UInt8]) -> SampleDescription {
        let format = FourCC(rawValue: UInt32(entry[4]) << 24 | UInt32(entry[5]) << 16 | UInt32(entry[6]) << 8
                                | UInt32(entry[7]))
        return SampleDescription(entry: SampleDescriptionBox.Entry(format: format, bytes: entry), kind: .audio,
                                 quickTimeLayout: false)
    }

    func testVideoCodecStringsComeFromTheConfigurationBytes() {
        // avcC: version 1, High profile (0x64), constraints 0x00, level 3.1 (0x1F).
        XCTAssertEqual(CodecString.rfc6381(visual("avc1", "avcC", [1, 0x64, 0x00, 0x1F, 0xFF, 0xE0])),
                       "avc1.64001f")
        XCTAssertEqual(CodecString.rfc6381(visual("avc3", "avcC", [1, 0x42, 0xC0, 0x1E, 0xFF, 0xE0])),
                       "avc3.42c01e")
        // hvcC: Main (space 0, tier 0, profile 1), compatibility 0x60000000 → reversed 6,
        // constraint byte 0xB0, level 93: ISO/IEC 14496-15 Annex E's own example.
        var hvcC: [UInt8] = [1, 0x01, 0x60, 0, 0, 0, 0xB0, 0, 0, 0, 0, 0, 93]
        hvcC += [UInt8](repeating: 0, count: 10)
        XCTAssertEqual(CodecString.rfc6381(visual("hvc1", "hvcC", hvcC)), "hvc1.1.6.L93.B0")
        XCTAssertEqual(CodecString.rfc6381(visual("hev1", "hvcC", hvcC)), "hev1.1.6.L93.B0")
        // Main 10, high tier: profile 2, tier bit 0x20, compatibility 0x20000000 → 4.
        var main10 = hvcC
        main10[1] = 0x22
        main10[2] = 0x20
        main10[12] = 150
        XCTAssertEqual(CodecString.rfc6381(visual("hvc1", "hvcC", main10)), "hvc1.2.4.H150.B0")
        // av1C: marker|version 0x81, profile 0 level 8, tier 0 high_bitdepth 1 (10-bit).
        XCTAssertEqual(CodecString.rfc6381(visual("av01", "av1C", [0x81, 0x08, 0x4C, 0])), "av01.0.08M.10")
        // vpcC version 1: profile 0, level 31, bit depth 8.
        XCTAssertEqual(CodecString.rfc6381(visual("vp09", "vpcC", [1, 0, 0, 0, 0, 31, 0x80, 1, 1, 1, 0, 0])),
                       "vp09.00.31.08")
        // Too short, or the wrong box: no string rather than a guess.
        XCTAssertNil(CodecString.rfc6381(visual("avc1", "avcC", [1, 0x64])))
        XCTAssertNil(CodecString.rfc6381(visual("hvc1", "avcC", [1, 0x64, 0x00, 0x1F])))
    }

    func testAudioCodecStringsFollowTheEntry() {
        XCTAssertEqual(CodecString.rfc6381(audio(SyntheticMovie.aacEntry)), "mp4a.40.2")
        // HE-AAC signalled explicitly (object type 5, then the core's 2): the signalled 5.
        let heAAC = AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                              children: [SyntheticMovie.esds(objectType: 0x40,
                                                                             config: [0x2B, 0x92, 0x08, 0x00])])
        XCTAssertEqual(CodecString.rfc6381(audio(heAAC)), "mp4a.40.5")
        let mp3 = AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                            children: [SyntheticMovie.esds(objectType: 0x6B, config: [])])
        XCTAssertEqual(CodecString.rfc6381(audio(mp3)), "mp4a.6B")
        for name in ["ac-3", "ec-3", "Opus", "fLaC", "alac"] {
            let entry = AudioSampleEntry.isoEntry(format: FourCC(name)!, channelCount: 2,
                                                  sampleRate: 48000, children: [])
            XCTAssertEqual(CodecString.rfc6381(audio(entry)), name, "Apple's players want the entry's case")
        }
        let unknown = AudioSampleEntry.isoEntry(format: "samr", channelCount: 1, sampleRate: 8000, children: [])
        XCTAssertNil(CodecString.rfc6381(audio(unknown)))
    }

    // MARK: Segment plan

    /// A video track of `count` frames of 1001 ticks at 30000, sync at `syncs`.
    func video(_ count: Int, syncs: Set<Int>, origin: Int64 = 0) -> SegmentPlanner.Track {
        SegmentPlanner.Track(timescale: 30000, origin: origin, decodeTimes: (0..<count).map { UInt64($0 * 1001) },
                             isSync: (0..<count).map { syncs.contains($0) }, endTime: UInt64(count * 1001))
    }

    func audioTrack(seconds: Int, origin: Int64 = 0) -> SegmentPlanner.Track {
        let count = seconds * 48000 / 1024
        return SegmentPlanner.Track(timescale: 48000, origin: origin, decodeTimes: (0..<count).map { UInt64($0 * 1024) },
                                    isSync: Array(repeating: true, count: count), endTime: UInt64(count * 1024))
    }

    func seconds(_ track: SegmentPlanner.Track, _ range: Range<Int>) -> Double {
        let end = range.upperBound < track.decodeTimes.count ? track.decodeTimes[range.upperBound] : track.endTime
        return Double(end - track.decodeTimes[range.lowerBound]) / Double(track.timescale)
    }

    func testVideoIsCutAtTheFirstSyncSampleAtOrAfterEachMultiple() throws {
        // 20 s at 29.97 fps, a sync sample every 15 frames (0.5 s): 2 s segments of 60 frames.
        let track = video(600, syncs: Set(stride(from: 0, to: 600, by: 15)))
        let plan = try SegmentPlanner.plan([track], segmentDuration: MediaTime(ticks: 2, timescale: 1)!, leader: 0)
        XCTAssertEqual(plan[0].map(\.lowerBound), Array(stride(from: 0, to: 600, by: 60)))
        XCTAssertEqual(plan[0].last?.upperBound, 600)
    }

    func testIrregularGroupsOfPicturesSkipMultiplesTheyCover() throws {
        // Sync samples at 0, 1.3 s (39), 2.2 s (66), 5.9 s (177), 6.1 s (183), 9.7 s (291).
        let track = video(360, syncs: [0, 39, 66, 177, 183, 291])
        let plan = try SegmentPlanner.plan([track], segmentDuration: MediaTime(ticks: 2, timescale: 1)!, leader: 0)
        // 2 s → 66 (2.2 s); 4 s → 177 (5.9 s); 6 s → 183 (6.1 s); 8 s → 291 (9.7 s), whose
        // 2.3 s tail is kept (above half the 4 s target the 3.6 s segment makes).
        XCTAssertEqual(plan[0].map(\.lowerBound), [0, 66, 177, 183, 291])
        for range in plan[0] { XCTAssertTrue(track.isSync[range.lowerBound]) }
    }

    func testAudioFollowsTheVideoWithinOneFrame() throws {
        let lead = video(300, syncs: Set(stride(from: 0, to: 300, by: 30)))
        // AAC's 1024 samples of priming: media time 1024 is presented at 0.
        let sound = audioTrack(seconds: 10, origin: 1024)
        let plan = try SegmentPlanner.plan([lead, sound], segmentDuration: MediaTime(ticks: 3, timescale: 1)!,
                                           leader: 0)
        XCTAssertEqual(plan[0].count, plan[1].count)
        for (videoRange, audioRange) in zip(plan[0].dropFirst(), plan[1].dropFirst()) {
            let cut = Double(lead.decodeTimes[videoRange.lowerBound]) / 30000
            let audioCut = Double(Int64(sound.decodeTimes[audioRange.lowerBound]) - 1024) / 48000
            XCTAssertGreaterThanOrEqual(audioCut, cut)
            XCTAssertLessThan(audioCut - cut, 1024.0 / 48000, "within one audio frame after the video's cut")
        }
        XCTAssertEqual(plan[1].last?.upperBound, sound.decodeTimes.count)
    }

    func testShortTailIsBalancedOrJoined() throws {
        // Audio alone, 20 s in 6 s segments: 6, 6, 6, 2 → the last two balanced as 4 + 4.
        let sound = audioTrack(seconds: 20)
        let plan = try SegmentPlanner.plan([sound], segmentDuration: MediaTime(ticks: 6, timescale: 1)!, leader: 0)
        let lengths = plan[0].map { seconds(sound, $0) }
        XCTAssertEqual(lengths.count, 4)
        XCTAssertEqual(lengths[2], lengths[3], accuracy: 1024.0 / 48000)
        XCTAssertGreaterThanOrEqual(lengths[3], 3)
        // Video with no sync sample between: 6, 6, 6, 2 joined as 6, 6, 8.
        let track = video(600, syncs: [0, 180, 360, 540])
        let video = try SegmentPlanner.plan([track], segmentDuration: MediaTime(ticks: 6, timescale: 1)!, leader: 0)
        XCTAssertEqual(video[0].map(\.lowerBound), [0, 180, 360])
    }

    func testRefusesAVideoThatDoesNotStartWithASyncSample() {
        XCTAssertThrowsError(try SegmentPlanner.plan([video(30, syncs: [10])],
                                                     segmentDuration: MediaTime(ticks: 1, timescale: 1)!, leader: 0)) {
            XCTAssertEqual($0 as? SegmentPlanner.Failure, .noSyncSample(0))
        }
        XCTAssertThrowsError(try SegmentPlanner.plan([video(30, syncs: [])],
                                                     segmentDuration: MediaTime(ticks: 1, timescale: 1)!, leader: 0))
    }

    /// The planner walking a ``SampleIndex`` (what `package` does, nothing held per sample)
    /// cuts where it cuts the same samples given as arrays: B-frame offsets, a sync sample
    /// every 12, a follower with another timescale and origin, tails balanced and joined.
    func testWalkingTheIndexPlansAsTheArraysDo() throws {
        let (table, _) = try SampleIndexTests.table(count: 3000)
        let index = try SampleIndex(table: table)
        func arrays(_ timescale: UInt32, _ origin: Int64) -> SegmentPlanner.Track {
            SegmentPlanner.Track(timescale: timescale, origin: origin, decodeTimes: index.map(\.decodeTime),
                                 isSync: index.map(\.isSync), endTime: index.totalDuration,
                                 compositionOffsets: index.map(\.compositionOffset))
        }
        func walked(_ timescale: UInt32, _ origin: Int64) -> SegmentPlanner.IndexedTrack {
            SegmentPlanner.IndexedTrack(index: index, timescale: timescale, origin: origin, endTime: index.totalDuration)
        }
        var compared = 0
        for seconds in [1, 2, 3, 5, 7, 50] {
            let duration = MediaTime(ticks: Int64(seconds), timescale: 1)!
            for (leader, origin) in [(0, 0), (1, 2002), (0, 1501)] as [(Int, Int64)] {
                let expected = try SegmentPlanner.plan([arrays(30000, 0), arrays(24000, origin)],
                                                       segmentDuration: duration, leader: leader)
                let plan = try SegmentPlanner.plan([walked(30000, 0), walked(24000, origin)],
                                                   segmentDuration: duration, leader: leader)
                XCTAssertEqual(plan, expected, "\(seconds) s, leader \(leader), origin \(origin)")
                XCTAssertGreaterThan(plan[leader].count, seconds == 50 ? 0 : 1)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 18)
    }

    /// Times a hostile file can claim (near 2^63, far-apart origins, extreme composition
    /// offsets) make the plan throw or succeed, never trap.
    func testHostileTimesNeverTrap() {
        let one = MediaTime(ticks: 1, timescale: 1)!
        let cases: [SegmentPlanner.Track] = [
            .init(timescale: 1, origin: Int64.min + 5, decodeTimes: [0, 1, 2], isSync: [true, true, true], endTime: 3),
            .init(timescale: 1, origin: Int64.max, decodeTimes: [0, 1], isSync: [true, true], endTime: 2),
            .init(timescale: 1, decodeTimes: [0, UInt64(Int64.max) - 1, UInt64.max - 1], isSync: [true, true, true],
                  endTime: UInt64.max),
            .init(timescale: 1, decodeTimes: [0, 1, 2], isSync: [true, true, true], endTime: 3,
                  compositionOffsets: [Int64.max, Int64.min, 0]),
            .init(timescale: 1, decodeTimes: [0, UInt64(Int64.max) - 2], isSync: [true, true],
                  endTime: UInt64(Int64.max)),
        ]
        for track in cases {
            _ = try? SegmentPlanner.plan([track], segmentDuration: one, leader: 0)
            _ = try? SegmentPlanner.plan([audioTrack(seconds: 1), track], segmentDuration: one, leader: 1)
        }
    }

    // MARK: Playlists

    func track(_ kind: StreamTrack.Kind, id: UInt32, timescale: UInt32, durations: [UInt64], sizes: [UInt64],
               codecs: String) -> StreamTrack {
        var track = StreamTrack(kind: kind, id: id, timescale: timescale, codecs: codecs,
                                playlistURI: "track\(id).m3u8", initURI: "track\(id)_init.mp4", name: "English")
        var time: UInt64 = 0
        for (k, (duration, size)) in zip(durations, sizes).enumerated() {
            track.segments.append(StreamSegment(decodeTime: time, duration: duration, uri: "track\(id)_\(k + 1).m4s",
                                                size: size))
            time += duration
        }
        return track
    }

    func testExtinfSumsExactlyAndTheTargetCoversEveryRoundedValue() throws {
        // 29.97 fps segments of 60, 60, 61 frames: 2.002, 2.002, 2.0354333… s.
        let video = track(.video, id: 1, timescale: 30000, durations: [60_060, 60_060, 61_061],
                          sizes: [100_000, 120_000, 90_000], codecs: "avc1.64001f")
        let durations = try XCTUnwrap(video.segmentMicroseconds)
        XCTAssertEqual(durations, [2_002_000, 2_002_000, 2_035_367])
        XCTAssertEqual(durations.reduce(0, +), 6_039_367, "the sum is the rounded total: 181181 / 30000 s")
        XCTAssertEqual(HLSPlaylist.targetDuration(of: [video]), 2)
        let text = try XCTUnwrap(HLSPlaylist.media(video, targetDuration: 2))
        XCTAssertEqual(text, """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="track1_init.mp4"
            #EXTINF:2.002000,
            track1_1.m4s
            #EXTINF:2.002000,
            track1_2.m4s
            #EXTINF:2.035367,
            track1_3.m4s
            #EXT-X-ENDLIST

            """)
        // 2.5 s rounds to 3 (halves up): the target must say 3.
        let long = track(.audio, id: 2, timescale: 1000, durations: [2500], sizes: [1], codecs: "mp4a.40.2")
        XCTAssertEqual(HLSPlaylist.targetDuration(of: [video, long]), 3)
    }

    func testPeakIsTheLargestRateOfSetsBetweenHalfAndOneAndAHalfTargets() {
        // Target 4: sets last 2…6 s. Segments of 2 s at 1, 3, 1 Mbit/s: the 3 Mbit/s segment
        // alone (2 s) qualifies; so does no set above it.
        let sizes: [UInt64] = [250_000, 750_000, 250_000]
        let peak = StreamBandwidth.peak(sizes: sizes, microseconds: [2_000_000, 2_000_000, 2_000_000],
                                        targetDuration: 4)
        XCTAssertEqual(peak, 3_000_000)
        // Target 8: sets last 4…12 s; the best is the first two or the last two: 2 Mbit/s.
        XCTAssertEqual(StreamBandwidth.peak(sizes: sizes, microseconds: [2_000_000, 2_000_000, 2_000_000],
                                            targetDuration: 8), 2_000_000)
        // Leaky bucket with 2 s of buffer: segment 2 (6 Mbit) must arrive by 2 + 2 s from its
        // own start → 3 Mbit/s; from the start, 8 Mbit by 4 s → 2 Mbit/s. The larger wins.
        XCTAssertEqual(StreamBandwidth.leakyBucket(sizes: sizes, microseconds: [2_000_000, 2_000_000, 2_000_000],
                                                   minBufferMicroseconds: 2_000_000), 3_000_000)
    }

    func testMultivariantPlaylistGroupsTheAudioAndAddsThePeaks() throws {
        var video = track(.video, id: 1, timescale: 30000, durations: [60_060, 60_060],
                          sizes: [250_250, 500_500], codecs: "avc1.64001f")
        video.width = 1920
        video.height = 1080
        video.frameRate = (30000, 1001)
        var english = track(.audio, id: 2, timescale: 48000, durations: [96_000, 96_000], sizes: [32_000, 32_000],
                            codecs: "mp4a.40.2")
        english.language = "en"
        english.channelCount = 2
        var french = english
        french.id = 3
        french.playlistURI = "track3.m3u8"
        french.language = "fr"
        french.name = "Français"
        french.segments = english.segments.map { var s = $0; s.size = 48_000; return s }
        let text = try XCTUnwrap(HLSPlaylist.multivariant([video, english, french], targetDuration: 2))
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "#EXTM3U")
        XCTAssertTrue(lines.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
        XCTAssertTrue(lines.contains("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio1\",LANGUAGE=\"en\",NAME=\"English\","
                                     + "CHANNELS=\"2\",DEFAULT=YES,AUTOSELECT=YES,URI=\"track2.m3u8\""))
        XCTAssertTrue(lines.contains("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio1\",LANGUAGE=\"fr\",NAME=\"Français\","
                                     + "CHANNELS=\"2\",DEFAULT=NO,AUTOSELECT=YES,URI=\"track3.m3u8\""))
        // Video peak: 500500 bytes in 2.002 s = 2 Mbit/s; the larger audio: 48000 in 2 s =
        // 192 kbit/s. Averages: 751 kB in 4.004 s = 1.5 Mbit/s, and 192 kbit/s.
        XCTAssertTrue(lines.contains("#EXT-X-STREAM-INF:BANDWIDTH=2192000,AVERAGE-BANDWIDTH=1692000,"
                                     + "CODECS=\"avc1.64001f,mp4a.40.2\",RESOLUTION=1920x1080,FRAME-RATE=29.970,"
                                     + "AUDIO=\"audio1\""), text)
        XCTAssertEqual(lines.last, "track1.m3u8")
        XCTAssertFalse(text.contains("VIDEO-RANGE"), "SDR is left out")
        video.videoRange = "PQ"
        video.keyFrameRanges = [0..<1000, 250_250..<251_000]
        video.iFramePlaylistURI = "track1_iframes.m3u8"
        let hdr = try XCTUnwrap(HLSPlaylist.multivariant([video, english], targetDuration: 2))
        XCTAssertTrue(hdr.contains(",FRAME-RATE=29.970,VIDEO-RANGE=PQ,AUDIO=\"audio1\"\n"), hdr)
        XCTAssertTrue(hdr.contains("RESOLUTION=1920x1080,VIDEO-RANGE=PQ,URI=\"track1_iframes.m3u8\"\n"), hdr)
    }

    func testManifestTimelineStartsAtEachTfdtAndRepeatsRuns() throws {
        var video = track(.video, id: 1, timescale: 30000, durations: [60_060, 60_060, 60_060, 30_030],
                          sizes: [1000, 1000, 1000, 500], codecs: "avc1.64001f")
        video.segments[0].decodeTime = 0
        let text = try XCTUnwrap(DASHManifest.manifest([video], targetDuration: 2) { "track\($0.id)_$Number$.m4s" })
        XCTAssertTrue(text.contains("<S t=\"0\" d=\"60060\" r=\"2\"/>\n            <S t=\"180180\" d=\"30030\"/>"),
                      text)
        XCTAssertTrue(text.contains("type=\"static\""))
        XCTAssertTrue(text.contains("mediaPresentationDuration=\"PT7.007S\""))
        XCTAssertTrue(text.contains("media=\"track1_$Number$.m4s\" startNumber=\"1\""))
        XCTAssertTrue(text.contains("codecs=\"avc1.64001f\""))
    }
}
