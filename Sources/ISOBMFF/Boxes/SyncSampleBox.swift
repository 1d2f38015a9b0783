/// `stss`: the 1-based numbers of the sync (random access) samples (ISO/IEC 14496-12 § 8.6.2).
/// When absent, every sample is a sync sample.
public struct SyncSampleBox: Box {
    public static let type = FourCC.stss
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The sync samples' numbers, counted from 1, in increasing order.
    public var sampleNumbers: [UInt32]

    /// A table listing `sampleNumbers` as the sync samples.
    public init(sampleNumbers: [UInt32]) {
        self.sampleNumbers = sampleNumbers
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        let count = try payload.readEntryCount(entrySize: 4)
        sampleNumbers = [UInt32](repeating: 0, count: count)
        for i in 0..<count { sampleNumbers[i] = try payload.readUInt32() }
    }

    /// A track's `stss` and QuickTime's `stps` as FFmpeg's demuxer reads them
    /// (libavformat/mov.c, `mov_build_index`): a table whose first entry is 0 counts from 0
    /// (some writers' mistake; sample numbers count from 1), so when no table's first entry
    /// is above 0 every entry is read one higher. GStreamer 1.22's qtdemux skips such an
    /// entry 0 and marks every other one a sample early. `stps` (QuickTime File Format,
    /// "Partial sync sample atom") lists the key frames of open GOPs: decoding can start
    /// there, but their leading pictures (presented before them) need the GOP before.
    static func asPlayersRead(_ stss: SyncSampleBox?, partial stps: SyncSampleBox?)
        -> (sync: SyncSampleBox?, partial: SyncSampleBox?) {
        let firsts = [stss?.sampleNumbers.first, stps?.sampleNumbers.first].compactMap { $0 }
        guard !firsts.isEmpty, !firsts.contains(where: { $0 > 0 }) else { return (stss, stps) }
        // UInt32.max + 1 wraps to 0, which SampleTable refuses as a sample that does not exist.
        func shifted(_ box: SyncSampleBox?) -> SyncSampleBox? {
            guard var box else { return nil }
            box.sampleNumbers = box.sampleNumbers.map { $0 &+ 1 }
            return box
        }
        return (shifted(stss), shifted(stps))
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: sampleNumbers.count))
            for number in sampleNumbers { w.write(number) }
        }
    }
}
