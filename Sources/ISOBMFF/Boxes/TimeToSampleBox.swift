/// `stts`: decoding durations, run-length coded (ISO/IEC 14496-12 § 8.6.1.2).
public struct TimeToSampleBox: Box {
    public static let type = FourCC.stts

    /// A run of consecutive samples with the same duration.
    public struct Entry: Sendable, Equatable {
        /// How many consecutive samples the run covers.
        public var sampleCount: UInt32
        /// The duration of each sample of the run, in the media timescale.
        public var sampleDelta: UInt32

        /// A run of `sampleCount` samples of `sampleDelta` ticks each.
        public init(sampleCount: UInt32, sampleDelta: UInt32) {
            self.sampleCount = sampleCount
            self.sampleDelta = sampleDelta
        }
    }

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The runs, in decoding order.
    public var entries: [Entry]

    /// A table built in memory.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        let count = try payload.readEntryCount(entrySize: 8)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(sampleCount: try payload.readUInt32(), sampleDelta: try payload.readUInt32()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.write(entry.sampleCount)
                w.write(entry.sampleDelta)
            }
        }
    }

    /// The number of samples the table describes. O(entries).
    public var sampleCount: UInt64 {
        entries.reduce(0) { $0 + UInt64($1.sampleCount) }  // < 2^32 entries × 2^32: no overflow.
    }

    /// The sum of all durations, in the media timescale. O(entries).
    public var totalDuration: UInt64 {
        // Each product is < 2^64 and an entry count < 2^32 of them could overflow only past
        // 2^96, but 2^32 × 2^32 × 2^32 entries cannot fit in a box: still, check.
        var total: UInt64 = 0
        for entry in entries {
            let (product, _) = UInt64(entry.sampleCount).multipliedReportingOverflow(by: UInt64(entry.sampleDelta))
            let (sum, overflow) = total.addingReportingOverflow(product)
            total = overflow ? UInt64.max : sum
        }
        return total
    }
}
