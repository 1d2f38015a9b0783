import ISOBMFF

/// What ``Remux/run(from:to:options:progress:isCancelled:)`` keeps and how it writes it.
public struct RemuxOptions: Sendable {
    /// The part of the input to keep; nil for all of it (a plain remux).
    public var range: CutRange?
    /// Leave out every audio track.
    public var dropAudio = false
    /// Leave out every video track.
    public var dropVideo = false
    /// Keep only these tracks (by `tkhd` track ID, as `probe` shows them); empty for all.
    public var trackIDs: [UInt32] = []
    /// Write movie fragments (fMP4) of about this many seconds, cut at sync samples; nil
    /// for a progressive file with `moov` first.
    public var fragmentSeconds: Double?
    /// Replace an existing output (atomically).
    public var overwrite = false
    /// Write a QuickTime movie (keep the tracks only QuickTime carries: timecode, PCM in
    /// `twos`/`sowt`); nil to decide by the output's extension (`.mov`).
    public var quickTime: Bool?
    /// Only audio tracks, into an M4A with the input's brands (else `M4A `); the first audio
    /// track unless ``trackIDs`` names one. (An audio cut with extraction's checks and
    /// metadata is ``ExtractionOptions/range``.)
    public var audioOnly = false
    /// Keep `moov/udta` and `moov/meta` (tags, chapters), sanitized; when false, the
    /// chapter tracks (text tracks named by a `tref/chap`) are dropped too.
    public var keepMetadata = true
    /// Tag changes made to the output (after ``keepMetadata`` kept or dropped the input's).
    public var tags = TagChanges()

    /// Options for a plain remux of every track.
    public init(range: CutRange? = nil) {
        self.range = range
    }
}

/// What ``Remux/run(from:to:options:progress:isCancelled:)`` wrote.
public struct RemuxResult: Sendable {
    /// One written track.
    public struct Track: Sendable, Equatable {
        /// The track ID in the input.
        public var inputID: UInt32
        /// The track ID in the output.
        public var outputID: UInt32
        /// The coding name (`avc1`, `mp4a`, …).
        public var format: String
        /// The samples copied.
        public var sampleCount: Int
        /// Seconds presented.
        public var seconds: Double
        /// The media timescale.
        public var timescale: UInt32 = 0
        /// Media ticks the copied samples last.
        public var mediaTicks: UInt64 = 0
        /// The first non-empty edit's media time (what precedes the presentation).
        public var skippedTicks: UInt64 = 0
        /// Media ticks presented.
        public var presentedTicks: UInt64 = 0
        /// How far the written edits' durations are from the exact ones, at worst, in
        /// seconds: they count in the output's movie timescale, which cannot always be a
        /// multiple of every track's (ISOBMFF's `movieTimescale(forTracksOf:)`).
        public var editRounding: Double = 0
    }

    /// The output's path.
    public var outputPath: String
    /// The tracks written, in output order.
    public var tracks: [Track]
    /// The presented duration of the output, in seconds.
    public var duration: Double
    /// The size of the output.
    public var bytesWritten: UInt64
    /// Things worth saying that change nothing (a cut before the first sync sample).
    public var notes: [String]
    /// What was dropped or repaired.
    public var warnings: [String]
    /// The input's tracks left out because their boxes are damaged (no readable `stsd`,
    /// tables that contradict each other or point outside the file), each with why; the
    /// other tracks are written as if they were not there (issue 32). Each also has a line
    /// in ``warnings``.
    public var droppedTracks: [DroppedTrack] = []

    /// A damaged input track that was left out: the one rule every recipe that drops one
    /// (remux, mux, concat, package) states it by.
    public struct DroppedTrack: Sendable, Equatable {
        /// Its `tkhd` track ID in the input.
        public var trackID: UInt32
        /// Why: the damage, with its box path and byte offset.
        public var reason: String
        /// The warning that says so ("track 2 (mp4a) was dropped: its boxes are damaged: …").
        public var warning: String

        /// `track`, left out because of `damage` (what ``MovieReader/damage(of:)`` found).
        init(_ track: MediaTrack, damage: ISOBMFFError) {
            trackID = track.id
            reason = "its boxes are damaged: \(damage.description)"
            warning = "track \(track.id)\(track.format.map { " (\($0))" } ?? "") was dropped: \(reason)"
        }
    }
}
