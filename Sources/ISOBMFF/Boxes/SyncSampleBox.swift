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

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: sampleNumbers.count))
            for number in sampleNumbers { w.write(number) }
        }
    }
}
