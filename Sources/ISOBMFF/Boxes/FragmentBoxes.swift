/// `trex`: per-track defaults for movie fragments (ISO/IEC 14496-12 § 8.8.3).
public struct TrackExtendsBox: Box {
    public static let type: FourCC = "trex"
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The track these defaults apply to.
    public var trackID: UInt32
    /// The `stsd` entry (1-based) of fragment samples when `tfhd` names none.
    public var defaultSampleDescriptionIndex: UInt32
    /// The duration, in the media timescale, of fragment samples when neither `trun` nor
    /// `tfhd` gives one.
    public var defaultSampleDuration: UInt32
    /// The size in bytes of fragment samples when neither `trun` nor `tfhd` gives one.
    public var defaultSampleSize: UInt32
    /// The sample flags (§ 8.8.3.1; bit 16 is `sample_is_non_sync_sample`) of fragment
    /// samples when neither `trun` nor `tfhd` gives them.
    public var defaultSampleFlags: UInt32

    /// Defaults for the track with ID `trackID`: by default the first sample entry, and every
    /// other value left to the fragments.
    public init(trackID: UInt32, defaultSampleDescriptionIndex: UInt32 = 1, defaultSampleDuration: UInt32 = 0,
                defaultSampleSize: UInt32 = 0, defaultSampleFlags: UInt32 = 0) {
        self.trackID = trackID
        self.defaultSampleDescriptionIndex = defaultSampleDescriptionIndex
        self.defaultSampleDuration = defaultSampleDuration
        self.defaultSampleSize = defaultSampleSize
        self.defaultSampleFlags = defaultSampleFlags
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        trackID = try payload.readUInt32()
        defaultSampleDescriptionIndex = try payload.readUInt32()
        defaultSampleDuration = try payload.readUInt32()
        defaultSampleSize = try payload.readUInt32()
        defaultSampleFlags = try payload.readUInt32()
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(trackID)
            w.write(defaultSampleDescriptionIndex)
            w.write(defaultSampleDuration)
            w.write(defaultSampleSize)
            w.write(defaultSampleFlags)
        }
    }
}

/// `tfhd`: which track a fragment belongs to, where its data starts and its sample
/// defaults (ISO/IEC 14496-12 § 8.8.7).
public struct TrackFragmentHeaderBox: Box {
    public static let type: FourCC = "tfhd"

    /// `tf_flags` bit: ``baseDataOffset`` is present.
    public static let baseDataOffsetPresent: UInt32 = 0x000001
    /// `tf_flags` bit: ``sampleDescriptionIndex`` is present.
    public static let sampleDescriptionIndexPresent: UInt32 = 0x000002
    /// `tf_flags` bit: ``defaultSampleDuration`` is present.
    public static let defaultSampleDurationPresent: UInt32 = 0x000008
    /// `tf_flags` bit: ``defaultSampleSize`` is present.
    public static let defaultSampleSizePresent: UInt32 = 0x000010
    /// `tf_flags` bit: ``defaultSampleFlags`` is present.
    public static let defaultSampleFlagsPresent: UInt32 = 0x000020
    /// `tf_flags` bit `duration-is-empty`: the fragment covers its default duration with no
    /// samples (a gap).
    public static let durationIsEmpty: UInt32 = 0x010000
    /// `tf_flags` bit `default-base-is-moof`: without ``baseDataOffset``, data offsets count
    /// from the start of the `moof`, not from where the previous track fragment's data ended
    /// (§ 8.8.7.1).
    public static let defaultBaseIsMoof: UInt32 = 0x020000

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// `tf_flags`: the presence bits above plus ``durationIsEmpty`` and ``defaultBaseIsMoof``.
    /// ``write(to:)`` sets the presence bits from the optional fields, so they cannot disagree.
    public var flags: UInt32
    /// The track this fragment's samples belong to.
    public var trackID: UInt32
    /// The absolute offset the runs' data offsets count from; nil to count from the `moof`
    /// or the previous track fragment's data (see ``defaultBaseIsMoof``).
    public var baseDataOffset: UInt64?
    /// The `stsd` entry (1-based) of this fragment's samples, overriding `trex`.
    public var sampleDescriptionIndex: UInt32?
    /// The duration of samples whose `trun` gives none, overriding `trex`.
    public var defaultSampleDuration: UInt32?
    /// The size of samples whose `trun` gives none, overriding `trex`.
    public var defaultSampleSize: UInt32?
    /// The flags of samples whose `trun` gives none, overriding `trex`.
    public var defaultSampleFlags: UInt32?

    /// A header with no optional fields; by default data offsets count from the `moof`, so a
    /// fragment can be read without the ones before it.
    public init(trackID: UInt32, flags: UInt32 = TrackFragmentHeaderBox.defaultBaseIsMoof) {
        self.trackID = trackID
        self.flags = flags
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        trackID = try payload.readUInt32()
        if flags & Self.baseDataOffsetPresent != 0 { baseDataOffset = try payload.readUInt64() }
        if flags & Self.sampleDescriptionIndexPresent != 0 { sampleDescriptionIndex = try payload.readUInt32() }
        if flags & Self.defaultSampleDurationPresent != 0 { defaultSampleDuration = try payload.readUInt32() }
        if flags & Self.defaultSampleSizePresent != 0 { defaultSampleSize = try payload.readUInt32() }
        if flags & Self.defaultSampleFlagsPresent != 0 { defaultSampleFlags = try payload.readUInt32() }
    }

    /// Writes the optional fields that are set, with the presence bits of ``flags`` set to
    /// match them.
    public func write(to writer: inout BoxWriter) {
        var flags = self.flags & (Self.durationIsEmpty | Self.defaultBaseIsMoof)
        if baseDataOffset != nil { flags |= Self.baseDataOffsetPresent }
        if sampleDescriptionIndex != nil { flags |= Self.sampleDescriptionIndexPresent }
        if defaultSampleDuration != nil { flags |= Self.defaultSampleDurationPresent }
        if defaultSampleSize != nil { flags |= Self.defaultSampleSizePresent }
        if defaultSampleFlags != nil { flags |= Self.defaultSampleFlagsPresent }
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(trackID)
            if let baseDataOffset { w.write(baseDataOffset) }
            if let sampleDescriptionIndex { w.write(sampleDescriptionIndex) }
            if let defaultSampleDuration { w.write(defaultSampleDuration) }
            if let defaultSampleSize { w.write(defaultSampleSize) }
            if let defaultSampleFlags { w.write(defaultSampleFlags) }
        }
    }
}

/// `tfdt`: the decode time of a fragment's first sample (ISO/IEC 14496-12 § 8.8.12).
public struct TrackFragmentDecodeTimeBox: Box {
    public static let type: FourCC = "tfdt"
    /// 0 for a 32-bit time, 1 for 64-bit; ``write(to:)`` moves to 1 when the time needs it.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The decode time of the fragment's first sample, in the media timescale: the sum of
    /// the durations of every earlier sample of the track.
    public var baseMediaDecodeTime: UInt64

    /// A `tfdt` of the smallest version that holds `baseMediaDecodeTime`.
    public init(baseMediaDecodeTime: UInt64) {
        version = baseMediaDecodeTime > UInt64(UInt32.max) ? 1 : 0
        self.baseMediaDecodeTime = baseMediaDecodeTime
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        baseMediaDecodeTime = version == 1 ? try payload.readUInt64() : UInt64(try payload.readUInt32())
    }

    public func write(to writer: inout BoxWriter) {
        let version = max(version, versionFor(baseMediaDecodeTime))
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            if version == 1 { w.write(baseMediaDecodeTime) } else { w.write(UInt32(truncatingIfNeeded: baseMediaDecodeTime)) }
        }
    }
}

/// `trun`: a run of contiguous samples of one track fragment, with whichever per-sample
/// fields its flags select (ISO/IEC 14496-12 § 8.8.8). Absent fields come from `tfhd`,
/// then `trex`.
public struct TrackRunBox: Box {
    public static let type: FourCC = "trun"

    /// `tr_flags` bit: ``dataOffset`` is present.
    public static let dataOffsetPresent: UInt32 = 0x000001
    /// `tr_flags` bit: ``firstSampleFlags`` is present.
    public static let firstSampleFlagsPresent: UInt32 = 0x000004
    /// `tr_flags` bit: each sample has a duration (``durations``).
    public static let sampleDurationPresent: UInt32 = 0x000100
    /// `tr_flags` bit: each sample has a size (``sizes``).
    public static let sampleSizePresent: UInt32 = 0x000200
    /// `tr_flags` bit: each sample has flags (``sampleFlags``).
    public static let sampleFlagsPresent: UInt32 = 0x000400
    /// `tr_flags` bit: each sample has a composition offset (``compositionTimeOffsets``).
    public static let sampleCompositionTimeOffsetPresent: UInt32 = 0x000800

    /// 0: composition offsets are unsigned; 1: signed.
    public var version: UInt8
    /// `tr_flags`: which of the optional fields are present (the constants above).
    public var flags: UInt32
    /// The number of samples in the run; each per-sample array that ``flags`` selects holds
    /// this many values.
    public var sampleCount: UInt32
    /// Relative to the fragment's base data offset.
    public var dataOffset: Int32?
    /// Flags for the first sample only, overriding the defaults: typically to mark a sync
    /// sample at the start of a run of non-sync ones.
    public var firstSampleFlags: UInt32?
    /// Per-sample durations; empty when absent, and then `tfhd` or `trex` gives them.
    public var durations: [UInt32]
    /// Per-sample sizes in bytes; empty when absent, and then `tfhd` or `trex` gives them.
    public var sizes: [UInt32]
    /// Per-sample flags (§ 8.8.3.1); empty when absent, and then `tfhd` or `trex` gives them.
    public var sampleFlags: [UInt32]
    /// Raw 32 bits: unsigned in version 0, signed in version 1.
    public var compositionTimeOffsets: [UInt32]

    /// A run built in memory, with ``flags`` set from the fields given. Each non-empty array
    /// must hold `sampleCount` values.
    public init(version: UInt8 = 0, sampleCount: UInt32, dataOffset: Int32? = nil, durations: [UInt32] = [],
                sizes: [UInt32] = [], compositionTimeOffsets: [UInt32] = []) {
        self.version = version
        self.sampleCount = sampleCount
        self.dataOffset = dataOffset
        self.firstSampleFlags = nil
        self.durations = durations
        self.sizes = sizes
        self.sampleFlags = []
        self.compositionTimeOffsets = compositionTimeOffsets
        flags = (dataOffset != nil ? Self.dataOffsetPresent : 0)
            | (durations.isEmpty ? 0 : Self.sampleDurationPresent) | (sizes.isEmpty ? 0 : Self.sampleSizePresent)
            | (compositionTimeOffsets.isEmpty ? 0 : Self.sampleCompositionTimeOffsetPresent)
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        let countOffset = payload.fileOffset
        sampleCount = try payload.readUInt32()
        if flags & Self.dataOffsetPresent != 0 { dataOffset = try payload.readInt32() }
        if flags & Self.firstSampleFlagsPresent != 0 { firstSampleFlags = try payload.readUInt32() }
        let runFlags = flags
        let fields = [Self.sampleDurationPresent, Self.sampleSizePresent, Self.sampleFlagsPresent,
                      Self.sampleCompositionTimeOffsetPresent].filter { runFlags & $0 != 0 }
        let needed = UInt64(sampleCount) * UInt64(fields.count * 4)  // < 2^36.
        guard needed <= UInt64(payload.remaining) else {
            throw payload.error(.countExceedsBox, "trun sample count \(sampleCount) needs \(needed) bytes, the box "
                                + "has \(payload.remaining)", at: countOffset)
        }
        let count = fields.isEmpty ? 0 : Int(sampleCount)
        durations = []
        sizes = []
        sampleFlags = []
        compositionTimeOffsets = []
        let hasDuration = flags & Self.sampleDurationPresent != 0
        let hasSize = flags & Self.sampleSizePresent != 0
        let hasFlags = flags & Self.sampleFlagsPresent != 0
        let hasOffset = flags & Self.sampleCompositionTimeOffsetPresent != 0
        if hasDuration { durations.reserveCapacity(count) }
        if hasSize { sizes.reserveCapacity(count) }
        for _ in 0..<count {
            if hasDuration { durations.append(try payload.readUInt32()) }
            if hasSize { sizes.append(try payload.readUInt32()) }
            if hasFlags { sampleFlags.append(try payload.readUInt32()) }
            if hasOffset { compositionTimeOffsets.append(try payload.readUInt32()) }
        }
    }

    /// Writes the fields ``flags`` selects. Each per-sample array it selects must hold
    /// ``sampleCount`` values, as parsing ensures.
    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(sampleCount)
            if let dataOffset { w.write(dataOffset) }
            if let firstSampleFlags { w.write(firstSampleFlags) }
            // A per-sample array shorter than sampleCount is written as zeros, never read past.
            func value(_ array: [UInt32], _ i: Int) -> UInt32 { i < array.count ? array[i] : 0 }
            for i in 0..<Int(sampleCount) {
                if flags & Self.sampleDurationPresent != 0 { w.write(value(durations, i)) }
                if flags & Self.sampleSizePresent != 0 { w.write(value(sizes, i)) }
                if flags & Self.sampleFlagsPresent != 0 { w.write(value(sampleFlags, i)) }
                if flags & Self.sampleCompositionTimeOffsetPresent != 0 { w.write(value(compositionTimeOffsets, i)) }
            }
        }
    }
}

/// `mehd`: the duration of a fragmented movie, fragments included (ISO/IEC 14496-12 § 8.8.2),
/// in the movie timescale. Optional; players use it to show a length before reading every
/// fragment.
public struct MovieExtendsHeaderBox: Box {
    public static let type: FourCC = "mehd"
    /// 0 for a 32-bit duration, 1 for 64-bit; ``write(to:)`` moves to 1 when the value needs it.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The whole movie's duration in the movie timescale.
    public var fragmentDuration: UInt64

    /// A header of the smallest version that holds `fragmentDuration`.
    public init(fragmentDuration: UInt64) {
        version = versionFor(fragmentDuration)
        self.fragmentDuration = fragmentDuration
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        fragmentDuration = version == 1 ? try payload.readUInt64() : UInt64(try payload.readUInt32())
    }

    public func write(to writer: inout BoxWriter) {
        let version = max(version, versionFor(fragmentDuration))
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            if version == 1 { w.write(fragmentDuration) } else { w.write(UInt32(truncatingIfNeeded: fragmentDuration)) }
        }
    }
}

/// `mfhd`: the sequence number of a movie fragment (ISO/IEC 14496-12 § 8.8.5), counting
/// from 1 in file order.
public struct MovieFragmentHeaderBox: Box {
    public static let type: FourCC = "mfhd"
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The fragment's number: 1 for the first, increasing.
    public var sequenceNumber: UInt32

    /// The header of fragment number `sequenceNumber`.
    public init(sequenceNumber: UInt32) {
        self.sequenceNumber = sequenceNumber
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        sequenceNumber = try payload.readUInt32()
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in w.write(sequenceNumber) }
    }
}
