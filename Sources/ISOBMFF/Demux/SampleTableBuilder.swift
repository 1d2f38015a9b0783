/// Builds the sample tables of a regular movie (`stts`, `ctts`, `stss`, `stsz`, `stsc`, chunk
/// offsets) one chunk at a time: the reader's way to turn movie fragments into the tables
/// of a regular movie, and to keep only the complete part of a truncated file.
///
/// The per-sample tables are coded by the package's one table builder (the writer's
/// `SampleTableWriter`); this adds the input's chunks, as `stsc` runs and offsets.
public struct SampleTableBuilder: Sendable {
    private var samples = SampleTableWriter()
    private var runs: [SampleToChunkBox.Entry] = []
    private var chunks: [UInt64] = []

    /// The number of samples appended so far.
    public var sampleCount: Int { samples.count }
    /// The sum of the durations so far.
    public var duration: UInt64 { samples.duration }

    /// An empty builder.
    public init() {}

    /// One sample of a chunk.
    public struct Sample: Sendable, Equatable {
        /// The sample's size in bytes.
        public var size: UInt32
        /// The sample's duration, in the media timescale.
        public var duration: UInt32
        /// Composition minus decode time.
        public var compositionOffset: Int64
        /// Whether decoding can start at this sample; `stss` is built only when some sample is not.
        public var isSync: Bool

        /// A sample; by default a sync sample presented at its decoding time.
        public init(size: UInt32, duration: UInt32, compositionOffset: Int64 = 0, isSync: Bool = true) {
            self.size = size
            self.duration = duration
            self.compositionOffset = compositionOffset
            self.isSync = isSync
        }
    }

    /// Appends a chunk of contiguous samples stored at `offset`.
    public mutating func appendChunk(offset: UInt64, sampleDescriptionIndex: UInt32, samples: [Sample]) throws {
        try appendChunk(offset: offset, sampleDescriptionIndex: sampleDescriptionIndex, count: samples.count) {
            samples[$0]
        }
    }

    /// Appends a chunk of `count` contiguous samples stored at `offset`, asking `sample`
    /// for each (0-based) in turn, so that a run described by defaults (a `trun` without
    /// per-sample fields) is never expanded into an array. Memory grows with the number of
    /// distinct runs (durations, offsets) and chunks, and once sizes differ four bytes a
    /// sample, as `stsz` itself; once a sample is not a sync sample, four bytes per sync
    /// sample, as `stss`.
    ///
    /// - Throws: `.limitExceeded` past ``Limits/maximumSampleCount`` samples, `.invalidValue`
    ///   when the durations pass 2^64 ticks.
    public mutating func appendChunk(offset: UInt64, sampleDescriptionIndex: UInt32, count: Int,
                                     sample: (Int) -> Sample) throws {
        guard count > 0 else { return }
        chunks.append(offset)
        let perChunk = UInt32(truncatingIfNeeded: count)
        if let last = runs.last, last.samplesPerChunk == perChunk, last.sampleDescriptionIndex == sampleDescriptionIndex {
        } else {
            runs.append(.init(firstChunk: UInt32(truncatingIfNeeded: chunks.count), samplesPerChunk: perChunk,
                              sampleDescriptionIndex: sampleDescriptionIndex))
        }
        for i in 0..<count {
            let next = sample(i)
            try samples.appendCoded(size: next.size, duration: next.duration, compositionOffset: next.compositionOffset,
                                    isSync: next.isSync, descriptionIndex: sampleDescriptionIndex)
        }
    }

    /// Lengthens the last sample so that the next one starts at `decodeTime` (a gap between
    /// fragments, as `tfdt` states it). Does nothing when there is no gap.
    public mutating func extendLastSample(toReach decodeTime: UInt64) {
        samples.extendLastSample(toReach: decodeTime)
    }

    /// The tables, with `descriptions` as `stsd`. `stsz` keeps one constant size when every
    /// sample has it; `stss` is listed only when some sample is not a sync sample.
    public func boxes(descriptions: SampleDescriptionBox, groups: [SampleGroupDescriptionBox] = [],
                      sampleToGroups: [SampleToGroupBox] = []) -> SampleTableBoxes {
        SampleTableBoxes(
            sampleDescriptions: descriptions, timeToSample: TimeToSampleBox(entries: samples.timeToSample),
            compositionOffsets: samples.compositionOffsetBox, sampleToChunk: SampleToChunkBox(entries: runs),
            sampleSizes: samples.sampleSizeBox, chunkOffsets: ChunkOffsetBox(offsets: chunks),
            syncSamples: samples.syncSampleBox, sampleGroupDescriptions: groups, sampleToGroups: sampleToGroups)
    }
}
