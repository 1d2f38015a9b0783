/// One media segment of a track, as the playlists list it.
public struct StreamSegment: Sendable, Equatable {
    /// Its first sample's decode time: the segment's `tfdt` (and the DASH `S@t`).
    public var decodeTime: UInt64
    /// The sum of its samples' durations, in the track's timescale.
    public var duration: UInt64
    /// The segment's file, relative to the playlist.
    public var uri: String
    /// Its bytes in that file; nil when the segment is the whole file.
    public var byteRange: Range<UInt64>?
    /// Its size in bytes (`styp` + `moof` + `mdat`).
    public var size: UInt64

    /// A segment from its fields.
    public init(decodeTime: UInt64, duration: UInt64, uri: String, byteRange: Range<UInt64>? = nil, size: UInt64) {
        self.decodeTime = decodeTime
        self.duration = duration
        self.uri = uri
        self.byteRange = byteRange
        self.size = size
    }
}

/// One packaged track: what the HLS and DASH manifests say about it.
public struct StreamTrack: Sendable, Equatable {
    /// Audio or video.
    public enum Kind: String, Sendable, Equatable {
        /// A sound track: an `EXT-X-MEDIA` rendition, an audio adaptation set.
        case audio
        /// A video track: a variant stream, a video adaptation set.
        case video
    }

    /// What the track holds.
    public var kind: Kind
    /// The track ID in the input, for names and `Representation@id`.
    public var id: UInt32
    /// The media timescale.
    public var timescale: UInt32
    /// The RFC 6381 codec string (``CodecString``).
    public var codecs: String
    /// The media playlist's name (HLS).
    public var playlistURI: String
    /// The init segment's file.
    public var initURI: String
    /// The init segment's bytes in ``initURI`` when it shares the file with the segments
    /// (`EXT-X-MAP` `BYTERANGE`); nil when it is the whole file.
    public var initRange: Range<UInt64>?
    /// The `sidx` bytes of a single file (DASH `SegmentBase@indexRange`); nil otherwise.
    public var indexRange: Range<UInt64>?
    /// A BCP 47 language tag (`en`); nil when undetermined.
    public var language: String?
    /// A name for people (`English`), unique among the tracks of its group.
    public var name: String
    /// Audio channels.
    public var channelCount: Int?
    /// Audio sample rate.
    public var sampleRate: Int?
    /// The picture's width in pixels (`RESOLUTION`).
    public var width: Int?
    /// The picture's height in pixels.
    public var height: Int?
    /// Frames per second as a fraction (frames × timescale over ticks), reduced.
    public var frameRate: (numerator: UInt64, denominator: UInt64)?
    /// The HLS `VIDEO-RANGE` (`PQ`, `HLG`) of a video track whose transfer function is not
    /// SDR's (``ColourDescription/videoRange``); nil for SDR or an undescribed track, whose
    /// variants leave the attribute out (RFC 8216bis § 4.4.6.2: SDR is the default).
    public var videoRange: String?
    /// The media segments in order.
    public var segments: [StreamSegment]
    /// Per segment, the bytes of its key frame with the `moof` before it (an I-frame
    /// playlist's ranges); empty for none.
    public var keyFrameRanges: [Range<UInt64>] = []
    /// The I-frame playlist's name, when one is written.
    public var iFramePlaylistURI: String?

    /// A track with no segments yet.
    public init(kind: Kind, id: UInt32, timescale: UInt32, codecs: String, playlistURI: String, initURI: String,
                name: String, segments: [StreamSegment] = []) {
        self.kind = kind
        self.id = id
        self.timescale = timescale
        self.codecs = codecs
        self.playlistURI = playlistURI
        self.initURI = initURI
        self.name = name
        self.segments = segments
    }

    /// Whether every field is the same (the frame rate compared as its two numbers).
    public static func == (a: StreamTrack, b: StreamTrack) -> Bool {
        a.kind == b.kind && a.id == b.id && a.timescale == b.timescale && a.codecs == b.codecs
            && a.playlistURI == b.playlistURI && a.initURI == b.initURI && a.initRange == b.initRange
            && a.indexRange == b.indexRange && a.language == b.language && a.name == b.name
            && a.channelCount == b.channelCount && a.sampleRate == b.sampleRate && a.width == b.width
            && a.height == b.height && a.videoRange == b.videoRange && a.frameRate?.numerator == b.frameRate?.numerator
            && a.frameRate?.denominator == b.frameRate?.denominator && a.segments == b.segments
            && a.keyFrameRanges == b.keyFrameRanges && a.iFramePlaylistURI == b.iFramePlaylistURI
    }

    /// Each segment's `EXTINF` in microseconds, rounded so that they sum exactly to the
    /// track's rounded total: segment k lasts `round(end_k) − round(start_k)`, times counted
    /// from the first segment's start. Nil when a time does not fit 64 bits.
    public var segmentMicroseconds: [UInt64]? {
        guard let first = segments.first else { return [] }
        var result: [UInt64] = []
        result.reserveCapacity(segments.count)
        var previous: UInt64 = 0
        for segment in segments {
            let (end, overflow) = (segment.decodeTime - min(segment.decodeTime, first.decodeTime))
                .addingReportingOverflow(segment.duration)
            guard !overflow, let microseconds = rescale(end, from: timescale, to: 1_000_000),
                  microseconds >= previous else { return nil }
            result.append(microseconds - previous)
            previous = microseconds
        }
        return result
    }

    /// The track's bit rate over all its segments, bits per second rounded up; nil when the
    /// track lasts no time.
    public var averageBandwidth: UInt64? {
        guard let durations = segmentMicroseconds else { return nil }
        return StreamBandwidth.rate(bytes: segments.reduce(0) { $0 &+ $1.size },
                                    microseconds: durations.reduce(0, +))
    }
}

/// Bit rates measured on the segments written, never declared.
public enum StreamBandwidth {
    /// `bytes × 8` over `microseconds`, in bits per second, rounded up; nil for no time.
    public static func rate(bytes: UInt64, microseconds: UInt64) -> UInt64? {
        guard microseconds > 0 else { return nil }
        let (bits, overflow) = bytes.multipliedReportingOverflow(by: 8)
        guard !overflow else { return nil }
        return MediaTime.scale(bits, by: 1_000_000, over: microseconds, rounding: .up)
    }

    /// The peak segment bit rate of HLS (RFC 8216bis § 4.1, the rule of RFC 8216 § 4.3.4.2's
    /// `BANDWIDTH`): the largest bit rate of any contiguous set of segments whose total
    /// duration is between 0.5 and 1.5 times the target duration; the rate of the whole
    /// track when no set is that long (a track shorter than half the target). O(n × the
    /// segments in 1.5 targets).
    public static func peak(sizes: [UInt64], microseconds: [UInt64], targetDuration: Int) -> UInt64? {
        guard sizes.count == microseconds.count, targetDuration > 0 else { return nil }
        let (target, overflow) = UInt64(targetDuration).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        let (low, high) = (target / 2, target / 2 > UInt64.max / 3 ? UInt64.max : target / 2 * 3)
        var best: UInt64?
        for start in sizes.indices {
            var (bytes, time): (UInt64, UInt64) = (0, 0)
            for index in start..<sizes.count {
                bytes &+= sizes[index]
                time &+= microseconds[index]
                if time > high { break }
                if time >= low, let rate = rate(bytes: bytes, microseconds: time) { best = max(best ?? 0, rate) }
            }
        }
        return best ?? rate(bytes: sizes.reduce(0, &+), microseconds: microseconds.reduce(0, &+))
    }

    /// The DASH `@bandwidth` (ISO/IEC 23009-1 § 5.3.5.2): the least rate B such that, delivered
    /// at B from any segment start after `minBufferTime` of buffering, every segment has
    /// arrived when its presentation starts: for all s ≤ k, the bytes of segments s…k ≤
    /// B × (minBufferTime + start_k − start_s). Rounded up to a bit per second. O(n²).
    public static func leakyBucket(sizes: [UInt64], microseconds: [UInt64], minBufferMicroseconds: UInt64) -> UInt64? {
        guard sizes.count == microseconds.count, minBufferMicroseconds > 0 else { return nil }
        var best: UInt64 = 0
        for start in sizes.indices {
            var (bytes, elapsed): (UInt64, UInt64) = (0, 0)
            for index in start..<sizes.count {
                bytes &+= sizes[index]
                guard let rate = rate(bytes: bytes, microseconds: minBufferMicroseconds &+ elapsed) else { return nil }
                best = max(best, rate)
                elapsed &+= microseconds[index]
            }
        }
        return best
    }
}

/// The text of HLS playlists (RFC 8216; Apple's HLS authoring specification) over packaged
/// tracks.
public enum HLSPlaylist {
    /// The `EXT-X-TARGETDURATION` shared by every media playlist: the largest `EXTINF`
    /// rounded to the nearest integer (RFC 8216 § 4.3.3.1), at least 1.
    public static func targetDuration(of tracks: [StreamTrack]) -> Int? {
        var target: UInt64 = 1
        for track in tracks {
            guard let durations = track.segmentMicroseconds else { return nil }
            for duration in durations {
                target = max(target, duration / 1_000_000 + (duration % 1_000_000 >= 500_000 ? 1 : 0))
            }
        }
        return Int(exactly: target)
    }

    /// `seconds.micro`, six decimals, from microseconds.
    static func decimal(_ microseconds: UInt64) -> String {
        let fraction = String(microseconds % 1_000_000)
        return "\(microseconds / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    static func byteRange(_ range: Range<UInt64>) -> String {
        "\(range.count)@\(range.lowerBound)"
    }

    /// The media playlist of `track` (version 7: `EXT-X-MAP` in a playlist without
    /// `EXT-X-I-FRAMES-ONLY`, RFC 8216 § 7).
    public static func media(_ track: StreamTrack, targetDuration: Int) -> String? {
        guard let durations = track.segmentMicroseconds else { return nil }
        var lines = header(targetDuration: targetDuration)
        lines.append(map(track))
        for (segment, duration) in zip(track.segments, durations) {
            lines.append("#EXTINF:\(decimal(duration)),")
            if let range = segment.byteRange { lines.append("#EXT-X-BYTERANGE:\(byteRange(range))") }
            lines.append(segment.uri)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The I-frame playlist of `track` (RFC 8216 § 4.3.3.6): one entry per segment, its range
    /// from the segment's `moof` to the end of its first (sync) sample, lasting the segment.
    public static func iFrames(_ track: StreamTrack, targetDuration: Int) -> String? {
        guard let durations = track.segmentMicroseconds, track.keyFrameRanges.count == track.segments.count else {
            return nil
        }
        var lines = header(targetDuration: targetDuration)
        lines.insert("#EXT-X-I-FRAMES-ONLY", at: lines.count - 1)
        lines.append(map(track))
        for (segment, (duration, range)) in zip(track.segments, zip(durations, track.keyFrameRanges)) {
            lines.append("#EXTINF:\(decimal(duration)),")
            lines.append("#EXT-X-BYTERANGE:\(byteRange(range))")
            lines.append(segment.uri)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    static func header(targetDuration: Int) -> [String] {
        ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:0",
         "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-INDEPENDENT-SEGMENTS"]
    }

    static func map(_ track: StreamTrack) -> String {
        "#EXT-X-MAP:URI=\"\(track.initURI)\"" + (track.initRange.map { ",BYTERANGE=\"\(byteRange($0))\"" } ?? "")
    }

    /// The multivariant playlist: the audio tracks in `EXT-X-MEDIA` groups (one per audio
    /// codec; the first of each `DEFAULT=YES`), a variant per video track and audio group whose
    /// `BANDWIDTH` is the video's peak plus the largest peak in the group and whose
    /// `AVERAGE-BANDWIDTH` is the same sum of averages, with `VIDEO-RANGE` when the video is
    /// not SDR; audio alone, a variant per audio track.
    public static func multivariant(_ tracks: [StreamTrack], targetDuration: Int) -> String? {
        var peaks: [UInt32: UInt64] = [:]
        var averages: [UInt32: UInt64] = [:]
        for track in tracks {
            guard let durations = track.segmentMicroseconds,
                  let peak = StreamBandwidth.peak(sizes: track.segments.map(\.size), microseconds: durations,
                                                  targetDuration: targetDuration),
                  let average = track.averageBandwidth else { return nil }
            peaks[track.id] = peak
            averages[track.id] = average
        }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        let audio = tracks.filter { $0.kind == .audio }
        let video = tracks.filter { $0.kind == .video }
        var groups: [(id: String, codecs: String, tracks: [StreamTrack])] = []
        for track in audio {
            if let index = groups.firstIndex(where: { $0.codecs == track.codecs }) {
                groups[index].tracks.append(track)
            } else {
                groups.append(("audio\(groups.count + 1)", track.codecs, [track]))
            }
        }
        if video.isEmpty {
            for track in audio {
                lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(peaks[track.id] ?? 0),AVERAGE-BANDWIDTH="
                             + "\(averages[track.id] ?? 0),CODECS=\"\(track.codecs)\"")
                lines.append(track.playlistURI)
            }
            return lines.joined(separator: "\n") + "\n"
        }
        for group in groups {
            for (index, track) in group.tracks.enumerated() {
                var attributes = ["TYPE=AUDIO", "GROUP-ID=\"\(group.id)\""]
                if let language = track.language { attributes.append("LANGUAGE=\"\(language)\"") }
                attributes.append("NAME=\"\(track.name)\"")
                if let channels = track.channelCount { attributes.append("CHANNELS=\"\(channels)\"") }
                attributes += ["DEFAULT=\(index == 0 ? "YES" : "NO")", "AUTOSELECT=YES", "URI=\"\(track.playlistURI)\""]
                lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
            }
        }
        for track in video {
            for group in groups.isEmpty ? [nil] : groups.map(Optional.some) {
                let audioPeak = group?.tracks.compactMap { peaks[$0.id] }.max() ?? 0
                let audioAverage = group?.tracks.compactMap { averages[$0.id] }.max() ?? 0
                var attributes = ["BANDWIDTH=\((peaks[track.id] ?? 0) &+ audioPeak)",
                                  "AVERAGE-BANDWIDTH=\((averages[track.id] ?? 0) &+ audioAverage)",
                                  "CODECS=\"\(track.codecs)\(group.map { "," + $0.codecs } ?? "")\""]
                if let width = track.width, let height = track.height {
                    attributes.append("RESOLUTION=\(width)x\(height)")
                }
                if let rate = track.frameRate, rate.denominator > 0,
                   let thousandths = MediaTime.scale(rate.numerator, by: 1000, over: rate.denominator,
                                                     rounding: .nearest) {
                    let fraction = String(thousandths % 1000)
                    attributes.append("FRAME-RATE=\(thousandths / 1000)."
                                      + String(repeating: "0", count: 3 - fraction.count) + fraction)
                }
                if let range = track.videoRange { attributes.append("VIDEO-RANGE=\(range)") }
                if let group { attributes.append("AUDIO=\"\(group.id)\"") }
                lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
                lines.append(track.playlistURI)
            }
        }
        for track in video where track.iFramePlaylistURI != nil {
            guard let uri = track.iFramePlaylistURI, let durations = track.segmentMicroseconds,
                  let peak = StreamBandwidth.peak(sizes: track.keyFrameRanges.map { UInt64($0.count) },
                                                  microseconds: durations, targetDuration: targetDuration)
            else { continue }
            var attributes = ["BANDWIDTH=\(peak)", "CODECS=\"\(track.codecs)\""]
            if let width = track.width, let height = track.height { attributes.append("RESOLUTION=\(width)x\(height)") }
            if let range = track.videoRange { attributes.append("VIDEO-RANGE=\(range)") }
            attributes.append("URI=\"\(uri)\"")
            lines.append("#EXT-X-I-FRAME-STREAM-INF:" + attributes.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The text of a static DASH manifest (ISO/IEC 23009-1) over the same segment files as
/// the HLS playlists.
public enum DASHManifest {
    /// The MPD: a period with an adaptation set per track; separate segments are addressed by
    /// a `SegmentTemplate` (`$Number$`) with a `SegmentTimeline` whose `S@t` are the segments'
    /// `tfdt`; a single file by `SegmentBase` and its `sidx`. `minBufferTime` is the target
    /// duration, and each `@bandwidth` the leaky-bucket rate for it
    /// (``StreamBandwidth/leakyBucket(sizes:microseconds:minBufferMicroseconds:)``).
    public static func manifest(_ tracks: [StreamTrack], targetDuration: Int,
                                segmentTemplate: (StreamTrack) -> String) -> String? {
        var longest: UInt64 = 0
        var sets: [String] = []
        for (index, track) in tracks.enumerated() {
            let (minimumBuffer, overflow) = UInt64(max(targetDuration, 1)).multipliedReportingOverflow(by: 1_000_000)
            guard !overflow, let durations = track.segmentMicroseconds,
                  let bandwidth = StreamBandwidth.leakyBucket(sizes: track.segments.map(\.size),
                                                              microseconds: durations,
                                                              minBufferMicroseconds: minimumBuffer)
            else { return nil }
            longest = max(longest, durations.reduce(0, &+))
            var set = "    <AdaptationSet id=\"\(index + 1)\" contentType=\"\(track.kind.rawValue)\" "
                + "mimeType=\"\(track.kind.rawValue)/mp4\" segmentAlignment=\"true\" startWithSAP=\"1\""
            if let language = track.language { set += " lang=\"\(escaped(language))\"" }
            set += ">\n"
            var representation = "      <Representation id=\"\(track.id)\" codecs=\"\(escaped(track.codecs))\" "
                + "bandwidth=\"\(bandwidth)\""
            if let width = track.width, let height = track.height {
                representation += " width=\"\(width)\" height=\"\(height)\""
            }
            if let rate = track.frameRate { representation += " frameRate=\"\(rate.numerator)/\(rate.denominator)\"" }
            if let rate = track.sampleRate { representation += " audioSamplingRate=\"\(rate)\"" }
            set += representation + ">\n"
            if let channels = track.channelCount {
                set += "        <AudioChannelConfiguration schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_"
                    + "configuration:2011\" value=\"\(channels)\"/>\n"
            }
            if let indexRange = track.indexRange, let initRange = track.initRange {
                set += "        <BaseURL>\(escaped(track.initURI))</BaseURL>\n"
                set += "        <SegmentBase timescale=\"\(track.timescale)\" indexRange=\"\(indexRange.lowerBound)-"
                    + "\(indexRange.upperBound - 1)\" indexRangeExact=\"true\">\n"
                set += "          <Initialization range=\"\(initRange.lowerBound)-\(initRange.upperBound - 1)\"/>\n"
                set += "        </SegmentBase>\n"
            } else {
                set += "        <SegmentTemplate timescale=\"\(track.timescale)\" initialization=\""
                    + "\(escaped(track.initURI))\" media=\"\(escaped(segmentTemplate(track)))\" startNumber=\"1\">\n"
                set += "          <SegmentTimeline>\n"
                var runs: [(t: UInt64, d: UInt64, r: Int)] = []
                var expected: UInt64?
                for segment in track.segments {
                    if let last = runs.last, last.d == segment.duration, expected == segment.decodeTime {
                        runs[runs.count - 1].r += 1
                    } else {
                        runs.append((segment.decodeTime, segment.duration, 0))
                    }
                    expected = segment.decodeTime &+ segment.duration
                }
                for run in runs {
                    set += "            <S t=\"\(run.t)\" d=\"\(run.d)\"" + (run.r > 0 ? " r=\"\(run.r)\"" : "") + "/>\n"
                }
                set += "          </SegmentTimeline>\n        </SegmentTemplate>\n"
            }
            set += "      </Representation>\n    </AdaptationSet>\n"
            sets.append(set)
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" profiles=\"urn:mpeg:dash:profile:isoff-"
            + (tracks.contains { $0.indexRange != nil } ? "on-demand" : "live") + ":2011\" type=\"static\" "
            + "mediaPresentationDuration=\"\(duration(longest))\" minBufferTime=\"PT\(targetDuration)S\">\n"
            + "  <Period id=\"1\" start=\"PT0S\">\n" + sets.joined() + "  </Period>\n</MPD>\n"
    }

    /// An `xs:duration` of whole milliseconds, rounded up.
    static func duration(_ microseconds: UInt64) -> String {
        let milliseconds = microseconds / 1000 + (microseconds % 1000 == 0 ? 0 : 1)
        let fraction = String(milliseconds % 1000)
        return "PT\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "S"
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
