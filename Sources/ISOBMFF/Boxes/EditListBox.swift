/// `elst`: maps the media timeline onto the movie timeline (ISO/IEC 14496-12 § 8.6.6).
///
/// For AAC, the first entry's `mediaTime` is the encoder priming to skip (often 1024 or 2112
/// samples) and its `segmentDuration` trims the padding at the end; gapless playback
/// depends on both surviving a remux unchanged.
public struct EditListBox: Box {
    public static let type = FourCC.elst

    /// One edit: a stretch of the movie timeline and the media time it starts from.
    public struct Entry: Sendable, Equatable {
        /// In the movie timescale (`mvhd`).
        public var segmentDuration: UInt64
        /// In the media timescale (`mdhd`); -1 means an empty edit.
        public var mediaTime: Int64
        /// The rate's integer part: 1 for normal play, 0 for a dwell (the frame at ``mediaTime``
        /// held for ``segmentDuration``).
        public var rateInteger: Int16
        /// The rate's fractional part (the `media_rate_fraction` field); 0 in practice.
        public var rateFraction: Int16

        /// An edit, at normal rate unless told otherwise.
        public init(segmentDuration: UInt64, mediaTime: Int64, rateInteger: Int16 = 1, rateFraction: Int16 = 0) {
            self.segmentDuration = segmentDuration
            self.mediaTime = mediaTime
            self.rateInteger = rateInteger
            self.rateFraction = rateFraction
        }

        /// Whether this is an empty edit (`media_time` -1): nothing is presented for
        /// ``segmentDuration``, as when a track starts after the movie does.
        public var isEmpty: Bool { mediaTime == -1 }
    }

    /// 0 for 32-bit durations and media times, 1 for 64-bit; ``write(to:)`` moves to 1 when a value
    /// needs more than 32 bits, so a long or late file never wraps around.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32
    /// The edits, in presentation order.
    public var entries: [Entry]

    /// An edit list built in memory (version 0 until an entry needs 64 bits).
    public init(entries: [Entry]) {
        version = 0
        flags = 0
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        let count = try payload.readEntryCount(entrySize: version == 1 ? 20 : 12)
        entries = []
        entries.reserveCapacity(min(count, Limits.initialTableCapacity))
        for _ in 0..<count {
            let duration: UInt64
            let mediaTime: Int64
            if version == 1 {
                duration = try payload.readUInt64()
                mediaTime = try payload.readInt64()
            } else {
                duration = UInt64(try payload.readUInt32())
                mediaTime = Int64(try payload.readInt32())
            }
            entries.append(Entry(segmentDuration: duration, mediaTime: mediaTime,
                                 rateInteger: try payload.readInt16(), rateFraction: try payload.readInt16()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        let needsWide = entries.contains {
            $0.segmentDuration > UInt64(UInt32.max) || Int32(exactly: $0.mediaTime) == nil
        }
        let version: UInt8 = needsWide ? 1 : version
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                if version == 1 {
                    w.write(entry.segmentDuration)
                    w.write(entry.mediaTime)
                } else {
                    w.write(UInt32(truncatingIfNeeded: entry.segmentDuration))
                    w.write(Int32(truncatingIfNeeded: entry.mediaTime))
                }
                w.write(entry.rateInteger)
                w.write(entry.rateFraction)
            }
        }
    }
}

extension Array<EditListBox.Entry> {
    /// The segment durations' sum (``Swift/Sequence/saturatingSum``): `UInt64.max` when it
    /// passes 2^64.
    public var totalDuration: UInt64 { lazy.map(\.segmentDuration).saturatingSum }

    /// The edits with their segment durations moved from the movie timescale `old` to `new`,
    /// each rounded to nearest; media times (in the media timescale) unchanged. Nil when a
    /// timescale is 0 or a duration, or their sum, passes 2^64 there. The one conversion of
    /// edit lists between movie timescales.
    public func rescaled(from old: UInt32, to new: UInt32) -> [EditListBox.Entry]? {
        guard new > 0 else { return nil }
        var converted = self
        var total: UInt64 = 0
        for index in converted.indices {
            guard let duration = rescale(converted[index].segmentDuration, from: old, to: new) else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(duration)
            guard !overflow else { return nil }
            total = sum
            converted[index].segmentDuration = duration
        }
        return converted
    }
}
