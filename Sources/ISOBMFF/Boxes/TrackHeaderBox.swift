/// `tkhd`: a track's ID, flags, duration and presentation (ISO/IEC 14496-12 § 8.3.2).
public struct TrackHeaderBox: Box {
    public static let type = FourCC.tkhd

    /// `track_enabled`: the track is played.
    public static let enabledFlag: UInt32 = 0x1
    /// `track_in_movie`: the track is part of the presentation.
    public static let inMovieFlag: UInt32 = 0x2

    /// 0 for 32-bit times and duration, 1 for 64-bit; ``write(to:)`` moves to 1 when a value
    /// needs more than 32 bits, so a long file never has its duration wrap around.
    public var version: UInt8
    /// `track_enabled` (``enabledFlag``), `track_in_movie` (``inMovieFlag``), `track_in_preview`
    /// (0x4) and `track_size_is_aspect_ratio` (0x8).
    public var flags: UInt32
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var creationTime: UInt64
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var modificationTime: UInt64
    /// The track's ID: unique in the movie and never 0; `trex`, `tfhd` and `tref` name tracks
    /// by it.
    public var trackID: UInt32
    /// The track's presentation duration, edits included, in the movie timescale (`mvhd`).
    public var duration: UInt64
    /// Front-to-back order of visual tracks: lower is closer to the viewer.
    public var layer: Int16
    /// Tracks that share a non-zero group are alternatives (languages, codecs): a player
    /// presents one of them.
    public var alternateGroup: Int16
    /// 8.8 fixed point: 0x0100 (full) for audio, 0 for other tracks.
    public var volume: Int16
    /// The video transformation matrix (see ``MovieHeaderBox/matrix``).
    public var matrix: [Int32]
    /// 16.16 fixed point.
    public var width: UInt32
    /// 16.16 fixed point, like ``width``; 0 for audio.
    public var height: UInt32

    /// How far the matrix turns the picture clockwise for display, in degrees: 0, 90, 180 or
    /// 270; nil when it is not a plain rotation (a mirror, a shear, a scale). The matrix
    /// `{a b u; c d v; x y w}` (§ 8.3.2.3, 16.16 fixed point for a, b, c, d) maps a point
    /// (p, q) to (a·p + c·q, b·p + d·q) on screen, y pointing down.
    public var rotation: Int? {
        guard matrix.count == 9 else { return nil }
        let one: Int32 = 0x10000
        switch (matrix[0], matrix[1], matrix[3], matrix[4]) {
        case (one, 0, 0, one): return 0
        case (0, one, -one, 0): return 90
        case (-one, 0, 0, -one): return 180
        case (0, -one, one, 0): return 270
        default: return nil
        }
    }

    /// Whether `track_enabled` is set: players ignore disabled tracks.
    public var isEnabled: Bool { flags & Self.enabledFlag != 0 }

    /// A header for a new track: enabled and in the movie, identity matrix, no picture size.
    public init(trackID: UInt32, duration: UInt64, alternateGroup: Int16 = 0, volume: Int16 = 0x0100,
                flags: UInt32 = TrackHeaderBox.enabledFlag | TrackHeaderBox.inMovieFlag) {
        version = 0
        self.flags = flags
        creationTime = 0
        modificationTime = 0
        self.trackID = trackID
        self.duration = duration
        layer = 0
        self.alternateGroup = alternateGroup
        self.volume = volume
        matrix = MovieHeaderBox.identityMatrix
        width = 0
        height = 0
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        if version == 1 {
            creationTime = try payload.readUInt64()
            modificationTime = try payload.readUInt64()
            trackID = try payload.readUInt32()
            try payload.skip(4)
            duration = try payload.readUInt64()
        } else {
            creationTime = UInt64(try payload.readUInt32())
            modificationTime = UInt64(try payload.readUInt32())
            trackID = try payload.readUInt32()
            try payload.skip(4)
            duration = UInt64(try payload.readUInt32())
        }
        try payload.skip(8)
        layer = try payload.readInt16()
        alternateGroup = try payload.readInt16()
        volume = try payload.readInt16()
        try payload.skip(2)
        matrix = try (0..<9).map { _ in try payload.readInt32() }
        width = try payload.readUInt32()
        height = try payload.readUInt32()
    }

    public func write(to writer: inout BoxWriter) {
        let version = max(version, versionFor(creationTime, modificationTime, duration))
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            if version == 1 {
                w.write(creationTime)
                w.write(modificationTime)
                w.write(trackID)
                w.writeZeros(4)
                w.write(duration)
            } else {
                w.write(UInt32(truncatingIfNeeded: creationTime))
                w.write(UInt32(truncatingIfNeeded: modificationTime))
                w.write(trackID)
                w.writeZeros(4)
                w.write(UInt32(truncatingIfNeeded: duration))
            }
            w.writeZeros(8)
            w.write(layer)
            w.write(alternateGroup)
            w.write(volume)
            w.writeZeros(2)
            for value in matrix { w.write(value) }
            w.write(width)
            w.write(height)
        }
    }
}
