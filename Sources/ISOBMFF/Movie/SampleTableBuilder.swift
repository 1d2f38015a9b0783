/// Builds sample tables (`stts`, `ctts`, `stss`, `stsz`, `stsc`, chunk offsets) one chunk
/// at a time, run-length coding as it goes. Used to turn movie fragments into the tables of
/// a regular movie, and to keep only the complete part of a truncated file.
public struct SampleTableBuilder: Sendable {
    private var timing: [TimeToSampleBox.Entry] = []
    private var offsets: [CompositionOffsetBox.Entry] = []
    private var hasOffsets = false
    private var hasNegativeOffsets = false
    /// Sync and non-sync samples, run-length coded: a run claiming millions of samples
    /// with one flags value costs one entry, not four bytes a sample.
    private var syncRuns: [SyncRun] = []
    /// The size every sample so far has, while they all have the same one; `sizes` is
    /// filled only once two sizes differ (then the file's own tables list them).
    private var commonSize: UInt32?
    private var sizes: [UInt32] = []
    private var runs: [SampleToChunkBox.Entry] = []
    private var chunks: [UInt64] = []
    /// The number of samples appended so far.
    public private(set) var sampleCount = 0
    /// The sum of the durations so far.
    public private(set) var duration: UInt64 = 0

    private struct SyncRun: Sendable {
        var isSync: Bool
        var count: Int
    }

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
        appendChunk(offset: offset, sampleDescriptionIndex: sampleDescriptionIndex, count: samples.count) { samples[$0] }
    }

    /// Appends a chunk of `count` contiguous samples stored at `offset`, asking `sample`
    /// for each (0-based) in turn, so that a run described by defaults (a `trun` without
    /// per-sample fields) is never expanded into an array. The builder's memory grows with
    /// the number of distinct runs (durations, offsets, flags) and, once sizes differ, four
    /// bytes a sample. The caller bounds the total count (at most 2^32 samples).
    public mutating func appendChunk(offset: UInt64, sampleDescriptionIndex: UInt32, count: Int,
                                     sample: (Int) -> Sample) {
        guard count > 0 else { return }
        chunks.append(offset)
        let perChunk = UInt32(truncatingIfNeeded: count)
        if let last = runs.last, last.samplesPerChunk == perChunk, last.sampleDescriptionIndex == sampleDescriptionIndex {
        } else {
            runs.append(.init(firstChunk: UInt32(truncatingIfNeeded: chunks.count), samplesPerChunk: perChunk,
                              sampleDescriptionIndex: sampleDescriptionIndex))
        }
        for i in 0..<count {
            let sample = sample(i)
            if sampleCount == 0 {
                commonSize = sample.size
            } else if let common = commonSize, common != sample.size {
                sizes = [UInt32](repeating: common, count: sampleCount)
                commonSize = nil
            }
            if commonSize == nil { sizes.append(sample.size) }
            sampleCount += 1
            duration &+= UInt64(sample.duration)  // At most 2^32 samples of 2^32: no overflow.
            if let last = timing.last, last.sampleDelta == sample.duration {
                timing[timing.count - 1].sampleCount &+= 1  // At most 2^32 samples (the caller's bound).
            } else {
                timing.append(.init(sampleCount: 1, sampleDelta: sample.duration))
            }
            let offset = UInt32(truncatingIfNeeded: sample.compositionOffset)
            if sample.compositionOffset != 0 { hasOffsets = true }
            if sample.compositionOffset < 0 { hasNegativeOffsets = true }
            if let last = offsets.last, last.sampleOffset == offset {
                offsets[offsets.count - 1].sampleCount &+= 1  // As for timing.
            } else {
                offsets.append(.init(sampleCount: 1, sampleOffset: offset))
            }
            if let last = syncRuns.last, last.isSync == sample.isSync {
                syncRuns[syncRuns.count - 1].count += 1
            } else {
                syncRuns.append(SyncRun(isSync: sample.isSync, count: 1))
            }
        }
    }

    /// Lengthens the last sample so that the next one starts at `decodeTime` (a gap between
    /// fragments, as `tfdt` states it). Does nothing when there is no gap.
    public mutating func extendLastSample(toReach decodeTime: UInt64) {
        guard decodeTime > duration, let last = timing.last else { return }
        let gap = decodeTime - duration
        let (sum, overflow) = UInt64(last.sampleDelta).addingReportingOverflow(gap)  // gap comes from tfdt.
        guard !overflow, let newDelta = UInt32(exactly: sum) else { return }
        if last.sampleCount == 1 {
            timing[timing.count - 1].sampleDelta = newDelta
        } else {
            timing[timing.count - 1].sampleCount -= 1
            timing.append(.init(sampleCount: 1, sampleDelta: newDelta))
        }
        duration = decodeTime
    }

    /// The tables, with `descriptions` as `stsd`. `stsz` keeps one constant size when every
    /// sample has it; `stss` is listed only when some sample is not a sync sample.
    public func boxes(descriptions: SampleDescriptionBox, groups: [SampleGroupDescriptionBox] = [],
                      sampleToGroups: [SampleToGroupBox] = []) -> SampleTableBoxes {
        let sampleSizes: SampleSizeBox
        if let common = commonSize, common != 0 {
            sampleSizes = SampleSizeBox(constantSize: common, sampleCount: UInt32(truncatingIfNeeded: sampleCount))
        } else if let common = commonSize {
            // Size 0 cannot be stated as a constant (it means "listed"): list the zeros.
            sampleSizes = SampleSizeBox(sizes: [UInt32](repeating: common, count: sampleCount))
        } else {
            sampleSizes = SampleSizeBox(sizes: sizes)
        }
        var syncSamples: SyncSampleBox?
        if syncRuns.contains(where: { !$0.isSync }) {
            var numbers: [UInt32] = []
            var next = 1
            for run in syncRuns {
                if run.isSync {
                    // Sample numbers are at most sampleCount, which the caller keeps below 2^32.
                    numbers.append(contentsOf: (next..<(next + run.count)).lazy.map { UInt32(truncatingIfNeeded: $0) })
                }
                next += run.count
            }
            syncSamples = SyncSampleBox(sampleNumbers: numbers)
        }
        return SampleTableBoxes(
            sampleDescriptions: descriptions, timeToSample: TimeToSampleBox(entries: timing),
            compositionOffsets: hasOffsets ? CompositionOffsetBox(version: hasNegativeOffsets ? 1 : 0, entries: offsets) : nil,
            sampleToChunk: SampleToChunkBox(entries: runs), sampleSizes: sampleSizes,
            chunkOffsets: ChunkOffsetBox(offsets: chunks), syncSamples: syncSamples,
            sampleGroupDescriptions: groups, sampleToGroups: sampleToGroups)
    }
}
