/// `sgpd`: descriptions shared by groups of samples (ISO/IEC 14496-12 § 8.9.3). For AAC the
/// `roll` group says how many samples before a seek point must be decoded (-1 for AAC).
public struct SampleGroupDescriptionBox: Box {
    public static let type = FourCC.sgpd

    /// 0 to 3: version 0 (deprecated) gives no entry lengths, 1 adds ``defaultLength``, 2 adds
    /// ``defaultSampleDescriptionIndex``.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The kind of group (`roll`, `prol`, `seig`, …), matched with the `sbgp` of the same
    /// type.
    public var groupingType: FourCC
    /// Version 1: the size of every entry, or 0 when each entry carries its own length.
    public var defaultLength: UInt32
    /// Version 2 and later.
    public var defaultSampleDescriptionIndex: UInt32
    /// The entries' bytes. For version 0, whose entry sizes depend on the grouping type,
    /// the whole entry area is kept as one element.
    public var entries: [[UInt8]]
    /// The entry count as stored (differs from `entries.count` only for version 0).
    public var entryCount: UInt32

    /// The AAC roll-recovery group FFmpeg writes: one entry, `roll_distance` -1.
    public static let aacRoll = SampleGroupDescriptionBox(
        version: 1, groupingType: .roll, defaultLength: 2, entries: [[0xFF, 0xFF]])

    /// A description box built in memory; with version 1 and `defaultLength` 0, each entry's
    /// length is written before it.
    public init(version: UInt8, groupingType: FourCC, defaultLength: UInt32, entries: [[UInt8]]) {
        self.version = version
        self.groupingType = groupingType
        self.defaultLength = defaultLength
        self.defaultSampleDescriptionIndex = 0
        self.entries = entries
        self.entryCount = UInt32(truncatingIfNeeded: entries.count)
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...3)
        groupingType = try payload.readFourCC()
        defaultLength = version >= 1 ? try payload.readUInt32() : 0
        defaultSampleDescriptionIndex = version >= 2 ? try payload.readUInt32() : 0
        if version == 0 {
            entryCount = try payload.readUInt32()
            entries = [payload.readRemainingBytes()]
            return
        }
        let fixedLength = Int(exactly: defaultLength) ?? Int.max
        let count = try payload.readEntryCount(entrySize: defaultLength == 0 ? 4 : max(fixedLength, 1))
        entryCount = UInt32(truncatingIfNeeded: count)
        entries = []
        entries.reserveCapacity(min(count, Limits.initialTableCapacity))
        for _ in 0..<count {
            var length = fixedLength
            if defaultLength == 0 {
                let stated = try payload.readUInt32()
                guard let exact = Int(exactly: stated) else {
                    throw payload.error(.countExceedsBox, "entry length \(stated) is larger than the box")
                }
                length = exact
            }
            entries.append(try payload.readBytes(length))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(groupingType)
            if version >= 1 { w.write(defaultLength) }
            if version >= 2 { w.write(defaultSampleDescriptionIndex) }
            w.write(entryCount)
            for entry in entries {
                if version >= 1 && defaultLength == 0 { w.write(UInt32(truncatingIfNeeded: entry.count)) }
                w.write(bytes: entry)
            }
        }
    }
}

/// `sbgp`: which samples belong to which group description (ISO/IEC 14496-12 § 8.9.2).
public struct SampleToGroupBox: Box {
    public static let type = FourCC.sbgp

    /// A run of consecutive samples in the same group.
    public struct Entry: Sendable, Equatable {
        /// How many consecutive samples the run covers.
        public var sampleCount: UInt32
        /// 1-based index into the matching `sgpd`; 0 means "no group".
        public var groupDescriptionIndex: UInt32

        /// A run of `sampleCount` samples in group `groupDescriptionIndex` (0 for none).
        public init(sampleCount: UInt32, groupDescriptionIndex: UInt32) {
            self.sampleCount = sampleCount
            self.groupDescriptionIndex = groupDescriptionIndex
        }
    }

    /// 0, or 1 with a ``groupingTypeParameter``.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The kind of group; the `sgpd` of the same type holds the descriptions.
    public var groupingType: FourCC
    /// Version 1: tells apart several mappings of the same grouping type; 0 otherwise.
    public var groupingTypeParameter: UInt32
    /// The runs, in decoding order; samples after the last run belong to no group.
    public var entries: [Entry]

    /// A version 0 mapping built in memory.
    public init(groupingType: FourCC, entries: [Entry]) {
        version = 0
        self.groupingType = groupingType
        groupingTypeParameter = 0
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        groupingType = try payload.readFourCC()
        groupingTypeParameter = version == 1 ? try payload.readUInt32() : 0
        let count = try payload.readEntryCount(entrySize: 8)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(sampleCount: try payload.readUInt32(), groupDescriptionIndex: try payload.readUInt32()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(groupingType)
            if version == 1 { w.write(groupingTypeParameter) }
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.write(entry.sampleCount)
                w.write(entry.groupDescriptionIndex)
            }
        }
    }
}
