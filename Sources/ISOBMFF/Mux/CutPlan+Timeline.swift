extension CutPlan {
    /// One track as ``timelineOffsets(of:)`` reads it.
    public struct TimelineTrack: Sendable {
        /// The track's samples; their decode times count from the first fragment's `tfdt`.
        public var samples: SampleIndex
        /// Its checked edits (``TrackPresentation``).
        public var presentation: TrackPresentation
        /// Its media timescale.
        public var timescale: UInt32

        /// A track of the timeline.
        public init(samples: SampleIndex, presentation: TrackPresentation, timescale: UInt32) {
            self.samples = samples
            self.presentation = presentation
            self.timescale = timescale
        }
    }

    /// Where a fragmented file's time 0 lies in each track's own presentation, in its media
    /// ticks: the `timelineOffset` of ``init(samples:presentation:timescale:movieTimescale:outputMovieTimescale:range:preRoll:timelineOffset:)``.
    ///
    /// In movie fragments every track's decode times count from its first `tfdt`
    /// (ISO/IEC 14496-12 § 8.8.12), which may be late (an HLS segment saved alone starts where
    /// the stream was, a DASH stream at its period's time), and its edits move it further (an
    /// HLS init segment's empty edit holds the stream's start). The tracks share that clock;
    /// the file's time 0 is where the first of them starts: its first decode time plus its
    /// empty edits (the media edit's start is its own 0). That is where FFmpeg's `start_time`
    /// puts it, and `-ss` counts from, where a track's first frame is presented at once; a
    /// B-frame delay without an edit stays a delay (GStreamer's placement, and a regular
    /// file's), and a priming an edit skips is not counted (FFmpeg 5.1 presents it in
    /// fragments, its `start_time` earlier by that much). A track's own presentation (what
    /// ``CutPlan`` cuts) starts at its first decode time, so its offset is the file's start
    /// minus that, in its ticks: all 0 when every track starts at decode time 0 without an
    /// empty edit. O(tracks).
    public static func timelineOffsets(of tracks: [TimelineTrack]) -> [Int64] {
        guard let origin = timelineOrigin(of: tracks) else { return tracks.map { _ in 0 } }
        return tracks.map { track in
            guard let ticks = MediaTime.scale(origin, by: UInt64(track.timescale), over: 1_000_000_000,
                                              rounding: .nearest),
                  let signed = Int64(exactly: ticks), let first = Int64(exactly: track.samples.firstDecodeTime),
                  case (let offset, false) = signed.subtractingReportingOverflow(first) else { return 0 }
            return offset
        }
    }

    /// Where a fragmented file's time 0 lies on the clock its tracks share, in nanoseconds:
    /// the earliest ``timelineStart(of:)`` of `tracks` (what ``timelineOffsets(of:)`` counts
    /// from; `probe`'s `start_time`). Nil when no track has samples. O(tracks).
    public static func timelineOrigin(of tracks: [TimelineTrack]) -> UInt64? {
        tracks.compactMap(timelineStart(of:)).min()
    }

    /// Where `track` starts on the clock the tracks share, in nanoseconds (exact to under a
    /// tick of any timescale up to 10^9, so converting back restores the tick): its first
    /// decode time plus its empty edits. Nil when that does not fit or the track has no
    /// samples.
    public static func timelineStart(of track: TimelineTrack) -> UInt64? {
        guard let local = localStart(of: track),
              case (let ticks, false) = track.samples.firstDecodeTime.addingReportingOverflow(local) else { return nil }
        return MediaTime.scale(ticks, by: 1_000_000_000, over: UInt64(track.timescale), rounding: .down)
    }

    /// Where `track` starts in its own presentation (from its first decode time), in its
    /// ticks: its empty edits. Nil when they do not fit or the track has no samples.
    static func localStart(of track: TimelineTrack) -> UInt64? {
        guard track.samples.count > 0, track.timescale > 0 else { return nil }
        var delay: UInt64 = 0
        for edit in track.presentation.edits {
            guard edit.isEmpty else { break }
            guard let ticks = rescale(edit.segmentDuration, from: track.presentation.segmentTimescale,
                                      to: track.timescale),
                  case (let sum, false) = delay.addingReportingOverflow(ticks) else { return nil }
            delay = sum
        }
        return delay
    }
}
