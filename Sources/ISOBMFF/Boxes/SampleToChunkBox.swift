/// `stsc`: how many samples each chunk holds, and with which sample description
/// (ISO/IEC 14496-12 § 8.7.4). An entry applies from `firstChunk` (1-based) up to the next
/// entry's first chunk.
public struct SampleToChunkBox: Box {
    public static let type = FourCC.stsc

    public struct Entry: Sendable, Equatable {
        public var firstChunk: UInt32
        public var samplesPerChunk: UInt32
        public var sampleDescriptionIndex: UInt32

        public init(firstChunk: UInt32, samplesPerChunk: UInt32, sampleDescriptionIndex: UInt32) {
            self.firstChunk = firstChunk
            self.samplesPerChunk = samplesPerChunk
            self.sampleDescriptionIndex = sampleDescriptionIndex
        }
    }

    public var version: UInt8 = 0
    public var flags: UInt32 = 0
    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        let count = try payload.readEntryCount(entrySize: 12)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(firstChunk: try payload.readUInt32(), samplesPerChunk: try payload.readUInt32(),
                                 sampleDescriptionIndex: try payload.readUInt32()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.write(entry.firstChunk)
                w.write(entry.samplesPerChunk)
                w.write(entry.sampleDescriptionIndex)
            }
        }
    }
}
