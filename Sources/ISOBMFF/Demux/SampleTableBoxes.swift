/// The boxes of one `stbl` (ISO/IEC 14496-12 § 8.5.1), parsed but not yet checked against
/// one another; ``SampleTable`` does that.
public struct SampleTableBoxes: Sendable {
    /// `stsd` (§ 8.5.2): the sample entries.
    public var sampleDescriptions: SampleDescriptionBox
    /// `stts` (§ 8.6.1.2): each sample's duration.
    public var timeToSample: TimeToSampleBox
    /// `ctts` (§ 8.6.1.3); nil when samples are presented in decoding order, as audio is.
    public var compositionOffsets: CompositionOffsetBox?
    /// `stsc` (§ 8.7.4): how samples are grouped into chunks.
    public var sampleToChunk: SampleToChunkBox
    /// `stsz` or `stz2` (§ 8.7.3): each sample's size.
    public var sampleSizes: SampleSizeBox
    /// `stco` or `co64` (§ 8.7.5): where each chunk starts.
    public var chunkOffsets: ChunkOffsetBox
    /// `stss` (§ 8.6.2); nil when every sample is a sync sample, as in audio.
    public var syncSamples: SyncSampleBox?
    /// QuickTime's `stps`: the partial sync samples (open-GOP key frames, whose leading
    /// pictures need the GOP before); nil when absent. Not sync samples: a cut does not start
    /// at one; ffprobe marks them key frames.
    public var partialSyncSamples: SyncSampleBox?
    /// Every `sgpd` (§ 8.9.3), in file order.
    public var sampleGroupDescriptions: [SampleGroupDescriptionBox]
    /// Every `sbgp` (§ 8.9.2), in file order.
    public var sampleToGroups: [SampleToGroupBox]
    /// Where each table box was found (box path and offset), for errors.
    public var locations: [FourCC: (path: String, offset: UInt64)]

    /// Tables built in memory (see ``SampleTableBuilder``).
    public init(sampleDescriptions: SampleDescriptionBox, timeToSample: TimeToSampleBox,
                compositionOffsets: CompositionOffsetBox?, sampleToChunk: SampleToChunkBox,
                sampleSizes: SampleSizeBox, chunkOffsets: ChunkOffsetBox, syncSamples: SyncSampleBox?,
                sampleGroupDescriptions: [SampleGroupDescriptionBox], sampleToGroups: [SampleToGroupBox],
                locations: [FourCC: (path: String, offset: UInt64)] = [:]) {
        self.sampleDescriptions = sampleDescriptions
        self.timeToSample = timeToSample
        self.compositionOffsets = compositionOffsets
        self.sampleToChunk = sampleToChunk
        self.sampleSizes = sampleSizes
        self.chunkOffsets = chunkOffsets
        self.syncSamples = syncSamples
        self.sampleGroupDescriptions = sampleGroupDescriptions
        self.sampleToGroups = sampleToGroups
        self.locations = locations
    }

    init(parsing stbl: ByteReader, descriptions: SampleDescriptionBox) throws {
        var reader = stbl
        var stts: TimeToSampleBox?
        var ctts: CompositionOffsetBox?
        var stsc: SampleToChunkBox?
        var stsz: SampleSizeBox?
        var chunkOffsets: ChunkOffsetBox?
        var stss: SyncSampleBox?
        var stps: SyncSampleBox?
        var groupDescriptions: [SampleGroupDescriptionBox] = []
        var toGroups: [SampleToGroupBox] = []
        var locations: [FourCC: (path: String, offset: UInt64)] = [:]
        while let (child, payload) = try reader.readBox(depth: 6) {
            var body = payload
            func once<T>(_ existing: T?, _ parse: (inout ByteReader) throws -> T) throws -> T {
                guard existing == nil else { throw duplicate(child) }
                locations[child.type] = (child.path, child.offset)
                return try parse(&body)
            }
            switch child.type {
            case .stts: stts = try once(stts, TimeToSampleBox.init(parsing:))
            case .ctts: ctts = try once(ctts, CompositionOffsetBox.init(parsing:))
            case .stsc: stsc = try once(stsc, SampleToChunkBox.init(parsing:))
            case .stsz: stsz = try once(stsz, SampleSizeBox.init(parsing:))
            case .stz2: stsz = try once(stsz, SampleSizeBox.init(parsingCompact:))
            case .stco: chunkOffsets = try once(chunkOffsets, ChunkOffsetBox.init(parsing:))
            case .co64: chunkOffsets = try once(chunkOffsets, ChunkOffsetBox.init(parsingLarge:))
            case .stss: stss = try once(stss, SyncSampleBox.init(parsing:))
            case .stps: stps = try once(stps, SyncSampleBox.init(parsing:))
            case .sgpd:
                locations[child.type] = (child.path, child.offset)
                groupDescriptions.append(try SampleGroupDescriptionBox(parsing: &body))
            case .sbgp:
                locations[child.type] = (child.path, child.offset)
                toGroups.append(try SampleToGroupBox(parsing: &body))
            default:
                break
            }
        }
        guard let stts else { throw missing(.stts, in: stbl) }
        guard let stsc else { throw missing(.stsc, in: stbl) }
        guard let stsz else { throw missing(.stsz, in: stbl) }
        guard let chunkOffsets else { throw missing(.stco, in: stbl) }
        self.sampleDescriptions = descriptions
        self.timeToSample = stts
        self.compositionOffsets = ctts
        self.sampleToChunk = stsc
        self.sampleSizes = stsz
        self.chunkOffsets = chunkOffsets
        (self.syncSamples, self.partialSyncSamples) = SyncSampleBox.asPlayersRead(stss, partial: stps)
        self.sampleGroupDescriptions = groupDescriptions
        self.sampleToGroups = toGroups
        self.locations = locations
    }
}
