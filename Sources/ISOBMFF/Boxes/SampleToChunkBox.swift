/// `stsc`: how many samples each chunk holds, and with which sample description
/// (ISO/IEC 14496-12 § 8.7.4). An entry applies from `firstChunk` (1-based) up to the next
/// entry's first chunk.
public struct SampleToChunkBox: Box {
    public static let type = FourCC.stsc

    /// A run of chunks with the same number of samples and the same sample description.
    public struct Entry: Sendable, Equatable {
        /// The run's first chunk, counted from 1; the run ends where the next entry's starts, or at
        /// the last chunk.
        public var firstChunk: UInt32
        /// How many samples each chunk of the run holds.
        public var samplesPerChunk: UInt32
        /// The sample entry (1-based index into `stsd`) of the run's samples.
        public var sampleDescriptionIndex: UInt32

        /// A run from `firstChunk` on.
        public init(firstChunk: UInt32, samplesPerChunk: UInt32, sampleDescriptionIndex: UInt32) {
            self.firstChunk = firstChunk
            self.samplesPerChunk = samplesPerChunk
            self.sampleDescriptionIndex = sampleDescriptionIndex
        }
    }

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The runs, by increasing ``Entry/firstChunk`` (``SampleTable`` checks it).
    public var entries: [Entry]

    /// A table built in memory.
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
