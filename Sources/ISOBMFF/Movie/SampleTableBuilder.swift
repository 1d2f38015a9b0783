/// Builds sample tables (`stts`, `ctts`, `stss`, `stsz`, `stsc`, chunk offsets) one chunk
/// at a time, run-length coding as it goes. Used to turn movie fragments into the tables of
/// a regular movie, and to keep only the complete part of a truncated file.
public struct SampleTableBuilder: Sendable {
    private var timing: [TimeToSampleBox.Entry] = []
    private var offsets: [CompositionOffsetBox.Entry] = []
    private var hasOffsets = false
    private var hasNegativeOffsets = false
    private var sync: [UInt32] = []
    private var allSync = true
    private var sizes: [UInt32] = []
    private var runs: [SampleToChunkBox.Entry] = []
    private var chunks: [UInt64] = []
    /// The number of samples appended so far.
    public private(set) var sampleCount = 0
    /// The sum of the durations so far.
    public private(set) var duration: UInt64 = 0

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
    public mutating func appendChunk(offset: UInt64, sampleDescriptionIndex: UInt32, samples: [Sample]) {
        guard !samples.isEmpty else { return }
        chunks.append(offset)
        let count = UInt32(truncatingIfNeeded: samples.count)
        if let last = runs.last, last.samplesPerChunk == count, last.sampleDescriptionIndex == sampleDescriptionIndex {
        } else {
            runs.append(.init(firstChunk: UInt32(truncatingIfNeeded: chunks.count), samplesPerChunk: count,
                              sampleDescriptionIndex: sampleDescriptionIndex))
        }
        for sample in samples {
            sampleCount += 1
            sizes.append(sample.size)
            duration &+= UInt64(sample.duration)  // At most 2^32 samples of 2^32: no overflow.
            if let last = timing.last, last.sampleDelta == sample.duration {
                timing[timing.count - 1].sampleCount += 1
            } else {
                timing.append(.init(sampleCount: 1, sampleDelta: sample.duration))
            }
            let offset = UInt32(truncatingIfNeeded: sample.compositionOffset)
            if sample.compositionOffset != 0 { hasOffsets = true }
            if sample.compositionOffset < 0 { hasNegativeOffsets = true }
            if let last = offsets.last, last.sampleOffset == offset {
                offsets[offsets.count - 1].sampleCount += 1
            } else {
                offsets.append(.init(sampleCount: 1, sampleOffset: offset))
            }
            if sample.isSync { sync.append(UInt32(truncatingIfNeeded: sampleCount)) } else { allSync = false }
        }
    }

    /// Lengthens the last sample so that the next one starts at `decodeTime` (a gap between
    /// fragments, as `tfdt` states it). Does nothing when there is no gap.
    public mutating func extendLastSample(toReach decodeTime: UInt64) {
        guard decodeTime > duration, let last = timing.last else { return }
        let gap = decodeTime - duration
        guard let newDelta = UInt32(exactly: UInt64(last.sampleDelta) + gap) else { return }
        if last.sampleCount == 1 {
            timing[timing.count - 1].sampleDelta = newDelta
        } else {
            timing[timing.count - 1].sampleCount -= 1
            timing.append(.init(sampleCount: 1, sampleDelta: newDelta))
        }
        duration = decodeTime
    }

    /// The tables, with `descriptions` as `stsd`.
    public func boxes(descriptions: SampleDescriptionBox, groups: [SampleGroupDescriptionBox] = [],
                      sampleToGroups: [SampleToGroupBox] = []) -> SampleTableBoxes {
        SampleTableBoxes(
            sampleDescriptions: descriptions, timeToSample: TimeToSampleBox(entries: timing),
            compositionOffsets: hasOffsets ? CompositionOffsetBox(version: hasNegativeOffsets ? 1 : 0, entries: offsets) : nil,
            sampleToChunk: SampleToChunkBox(entries: runs), sampleSizes: SampleSizeBox(sizes: sizes),
            chunkOffsets: ChunkOffsetBox(offsets: chunks), syncSamples: allSync ? nil : SyncSampleBox(sampleNumbers: sync),
            sampleGroupDescriptions: groups, sampleToGroups: sampleToGroups)
    }
}
