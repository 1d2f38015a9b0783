/// `stss`: the 1-based numbers of the sync (random access) samples (ISO/IEC 14496-12 § 8.6.2).
/// When absent, every sample is a sync sample.
public struct SyncSampleBox: Box {
    public static let type = FourCC.stss
    public var version: UInt8 = 0
    public var flags: UInt32 = 0
    public var sampleNumbers: [UInt32]

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
