/// `ctts`: composition time minus decoding time per sample, run-length coded
/// (ISO/IEC 14496-12 § 8.6.1.3). Version 0 offsets are unsigned, version 1 signed; the raw
/// 32 bits are kept so the box is copied exactly.
public struct CompositionOffsetBox: Box {
    public static let type = FourCC.ctts

    public struct Entry: Sendable, Equatable {
        public var sampleCount: UInt32
        public var sampleOffset: UInt32

        public init(sampleCount: UInt32, sampleOffset: UInt32) {
            self.sampleCount = sampleCount
            self.sampleOffset = sampleOffset
        }
    }

    public var version: UInt8
    public var flags: UInt32 = 0
    public var entries: [Entry]

    public init(version: UInt8, entries: [Entry]) {
        self.version = version
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        let count = try payload.readEntryCount(entrySize: 8)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(sampleCount: try payload.readUInt32(), sampleOffset: try payload.readUInt32()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.write(entry.sampleCount)
                w.write(entry.sampleOffset)
            }
        }
    }

    /// The number of samples the table describes. O(entries).
    public var sampleCount: UInt64 {
        entries.reduce(0) { $0 + UInt64($1.sampleCount) }
    }
}
