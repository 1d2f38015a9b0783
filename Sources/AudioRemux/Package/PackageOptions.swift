import ISOBMFF

/// What ``Packager/run(from:to:options:progress:isCancelled:)`` writes.
public struct PackageOptions: Sendable {
    /// The wanted segment duration in seconds: each video segment starts at the first sync
    /// sample at or after a multiple of it.
    public var segmentSeconds: Double = 6
    /// Write an I-frame playlist beside each video track's media playlist.
    public var iFramePlaylists = false
    /// One file per track (`trackN.mp4`: init segment, `sidx`, the segments), addressed by
    /// byte ranges (`EXT-X-BYTERANGE`, DASH `SegmentBase`) instead of a file per segment.
    public var singleFile = false
    /// Replace an existing output folder (only one package wrote: see docs/cli.md).
    public var overwrite = false

    /// The defaults: 6 s segments, no I-frame playlists.
    public init() {}
}

/// What ``Packager/run(from:to:options:progress:isCancelled:)`` wrote.
public struct PackageResult: Sendable {
    /// One packaged track.
    public struct Track: Sendable, Equatable {
        /// The track ID in the input.
        public var inputID: UInt32
        /// `audio` or `video`.
        public var kind: String
        /// The RFC 6381 codec string the playlists give.
        public var codecs: String
        /// Its media segments.
        public var segmentCount: Int
        /// Samples copied.
        public var sampleCount: Int
        /// The media duration of its segments, in seconds.
        public var seconds: Double
        /// The HLS peak segment bit rate, bits per second.
        public var peakBandwidth: UInt64
        /// Its bit rate over all segments.
        public var averageBandwidth: UInt64
    }

    /// The output folder.
    public var outputPath: String
    /// The tracks packaged, in input order.
    public var tracks: [Track]
    /// The `EXT-X-TARGETDURATION` of every media playlist.
    public var targetDuration: Int
    /// Bytes written in all.
    public var bytesWritten: UInt64
    /// Files written.
    public var fileCount: Int
    /// Tracks left out and other things worth saying.
    public var warnings: [String]
    /// The input's tracks left out because their boxes are damaged (issue 32), each also
    /// named in ``warnings``.
    public var droppedTracks: [RemuxResult.DroppedTrack] = []
}
