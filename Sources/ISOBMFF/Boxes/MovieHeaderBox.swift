/// `mvhd`: the movie's timescale, duration and presentation defaults (ISO/IEC 14496-12 § 8.2.2).
public struct MovieHeaderBox: Box {
    public static let type = FourCC.mvhd
    /// 0 for 32-bit times and duration, 1 for 64-bit; ``write(to:)`` moves to 1 when a value
    /// needs more than 32 bits, so a long file never has its duration wrap around.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var creationTime: UInt64
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var modificationTime: UInt64
    /// Ticks per second of the movie timeline, in which `tkhd` durations and edit list
    /// segment durations count.
    public var timescale: UInt32
    /// The presentation's duration in ``timescale`` ticks: that of the longest track, edits
    /// included.
    public var duration: UInt64
    /// The preferred playback rate, 16.16 fixed point (0x00010000 is normal speed).
    public var rate: Int32
    /// The preferred volume, 8.8 fixed point (0x0100 is full volume).
    public var volume: Int16
    /// The video transformation matrix (§ 8.2.2.3): nine values, ``identityMatrix`` for none.
    public var matrix: [Int32]
    /// QuickTime keeps preview and poster times here; ISO calls them `pre_defined`.
    public var predefined: [UInt8]
    /// A track ID not yet in use (greater than all of them), for a tool that adds a track.
    public var nextTrackID: UInt32

    /// The identity transformation as `mvhd` and `tkhd` store it: a, b, c, d, x, y in 16.16
    /// fixed point and u, v, w in 2.30.
    public static let identityMatrix: [Int32] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]

    /// A header for a new movie: normal rate and volume, identity matrix, no dates.
    public init(timescale: UInt32, duration: UInt64, nextTrackID: UInt32) {
        version = 0
        flags = 0
        creationTime = 0
        modificationTime = 0
        self.timescale = timescale
        self.duration = duration
        rate = 0x0001_0000
        volume = 0x0100
        matrix = Self.identityMatrix
        predefined = [UInt8](repeating: 0, count: 24)
        self.nextTrackID = nextTrackID
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        if version == 1 {
            creationTime = try payload.readUInt64()
            modificationTime = try payload.readUInt64()
            timescale = try payload.readUInt32()
            duration = try payload.readUInt64()
        } else {
            creationTime = UInt64(try payload.readUInt32())
            modificationTime = UInt64(try payload.readUInt32())
            timescale = try payload.readUInt32()
            duration = UInt64(try payload.readUInt32())
        }
        rate = try payload.readInt32()
        volume = try payload.readInt16()
        try payload.skip(10)
        matrix = try (0..<9).map { _ in try payload.readInt32() }
        predefined = try payload.readBytes(24)
        nextTrackID = try payload.readUInt32()
    }

    public func write(to writer: inout BoxWriter) {
        let version = max(version, versionFor(creationTime, modificationTime, duration))
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            if version == 1 {
                w.write(creationTime)
                w.write(modificationTime)
                w.write(timescale)
                w.write(duration)
            } else {
                w.write(UInt32(truncatingIfNeeded: creationTime))
                w.write(UInt32(truncatingIfNeeded: modificationTime))
                w.write(timescale)
                w.write(UInt32(truncatingIfNeeded: duration))
            }
            w.write(rate)
            w.write(volume)
            w.writeZeros(10)
            for value in matrix { w.write(value) }
            w.write(bytes: predefined)
            w.write(nextTrackID)
        }
    }
}
