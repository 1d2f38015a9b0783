/// The samples appended to one written track, kept as the compressed tables they become:
/// the one table builder of the package (`stts`, `ctts`, `stss`, `stsz`; ISO/IEC 14496-12
/// § 8.6–8.7). The writer adds the chunks (`stsc`, `stco`/`co64`) when it lays the file
/// out; the reader's ``SampleTableBuilder`` adds the input's, for fragments.
///
/// Memory follows the tables, not the sample count: timing, composition offsets and
/// description indexes are run-length coded as they are appended; sizes take 4 bytes a
/// sample only once they vary (as `stsz` itself); sync samples take 4 bytes each only
/// once a non-sync sample appears; where the bytes come from is kept as contiguous runs.
public struct SampleTableWriter: Sendable {
    /// Where a run of sample bytes comes from: a source (by index) and a range in it.
    struct Location: Sendable, Equatable {
        /// Index of the caller's source; ``memory`` for bytes appended in memory.
        var source: Int
        var offset: UInt64
        var length: UInt64
        static let memory = -1
    }

    /// `stts` runs: consecutive samples of one duration.
    public private(set) var timeToSample: [TimeToSampleBox.Entry] = []
    /// `ctts` runs as signed offsets; empty while every offset is 0.
    private(set) var compositionRuns: [(count: UInt32, offset: Int64)] = []
    /// 1-based numbers of the sync samples, kept only once a non-sync sample appeared.
    public private(set) var syncSampleNumbers: [UInt32] = []
    /// Whether every sample so far is a sync sample (then `stss` is omitted).
    public private(set) var isAllSync = true
    /// The size shared by every sample so far; nil once sizes vary (``sampleSizes`` holds them).
    public private(set) var constantSize: UInt32?
    /// Every sample's size, kept only once sizes vary.
    public private(set) var sampleSizes: [UInt32] = []
    /// Runs of consecutive samples of one `stsd` entry: (count, 1-based entry index).
    private(set) var descriptionRuns: [(count: UInt32, index: UInt32)] = []
    /// Where the sample bytes come from, in sample order, contiguous runs merged; after
    /// those of ``borrowed`` when a table was appended whole.
    private(set) var locations: [Location] = []
    /// A checked table appended whole to the empty track (``append(contentsOf:source:descriptionIndex:)``):
    /// its chunks hold the first samples' bytes, read from its arrays, which are shared
    /// rather than copied.
    private(set) var borrowed: (table: SampleTable, source: Int)?
    /// The number of samples appended.
    public private(set) var count = 0
    /// The sum of the sample sizes.
    public private(set) var totalBytes: UInt64 = 0
    /// The sum of the sample durations: the media duration, in the track's timescale.
    public private(set) var duration: UInt64 = 0

    /// An empty table; ``MovieWriter`` fills it as samples are appended.
    init() {}

    /// Appends one sample whose `size` bytes are at `offset` in the source numbered
    /// `source` (an index the caller gives the sink), or in the writer's memory when
    /// `source` is ``Location/memory``.
    mutating func append(size: UInt32, duration sampleDuration: UInt32, compositionOffset: Int64, isSync: Bool,
                         descriptionIndex: UInt32, source: Int, offset: UInt64) throws {
        guard !offset.addingReportingOverflow(UInt64(size)).overflow else {
            throw ISOBMFFError(.invalidValue, "sample \(count + 1) ends past 2^64 bytes", path: "", offset: nil)
        }
        try appendCoded(size: size, duration: sampleDuration, compositionOffset: compositionOffset, isSync: isSync,
                        descriptionIndex: descriptionIndex)
        if size > 0 {
            if let last = locations.last, last.source == source, last.offset &+ last.length == offset {
                locations[locations.count - 1].length += UInt64(size)
            } else {
                locations.append(Location(source: source, offset: offset, length: UInt64(size)))
            }
        }
    }

    /// Codes one more sample into the tables — timing, composition offset, sync flag,
    /// size, description — without saying where its bytes are: what the reader's
    /// ``SampleTableBuilder`` uses, with chunks of its own, so that the package codes these
    /// tables in one place.
    mutating func appendCoded(size: UInt32, duration sampleDuration: UInt32, compositionOffset: Int64, isSync: Bool,
                              descriptionIndex: UInt32) throws {
        guard count < Limits.maximumSampleCount else {
            throw ISOBMFFError(.limitExceeded, "more than \(Limits.maximumSampleCount) samples in one track",
                               path: "", offset: nil)
        }
        let (newDuration, durationOverflow) = duration.addingReportingOverflow(UInt64(sampleDuration))
        guard !durationOverflow else {
            throw ISOBMFFError(.invalidValue, "sample \(count + 1) ends past 2^64 ticks", path: "", offset: nil)
        }
        // Timing: extend the last run or start one (a run holds at most 2^32 - 1 samples).
        if let last = timeToSample.last, last.sampleDelta == sampleDuration, last.sampleCount < UInt32.max {
            timeToSample[timeToSample.count - 1].sampleCount += 1
        } else {
            timeToSample.append(.init(sampleCount: 1, sampleDelta: sampleDuration))
        }
        // Composition offsets: nothing stored while all are 0.
        if compositionOffset != 0 && compositionRuns.isEmpty && count > 0 {
            var left = count  // Earlier samples all had offset 0: runs of at most 2^32 - 1.
            while left > 0 {
                let run = min(left, Int(UInt32.max))
                compositionRuns.append((UInt32(run), 0))
                left -= run
            }
        }
        if compositionOffset != 0 || !compositionRuns.isEmpty {
            if let last = compositionRuns.last, last.offset == compositionOffset, last.count < UInt32.max {
                compositionRuns[compositionRuns.count - 1].count += 1
            } else {
                compositionRuns.append((1, compositionOffset))
            }
        }
        // Sync samples: numbered from 1; count < 2^30 (checked above), so the number fits.
        let number = UInt32(count + 1)
        if !isSync && isAllSync {
            isAllSync = false
            syncSampleNumbers = Array(1..<number)
        } else if isSync && !isAllSync {
            syncSampleNumbers.append(number)
        }
        // Sizes: constant until one differs.
        if count == 0 {
            constantSize = size
        } else if let constant = constantSize, constant != size {
            sampleSizes = Array(repeating: constant, count: count)
            constantSize = nil
        }
        if constantSize == nil { sampleSizes.append(size) }
        if let last = descriptionRuns.last, last.index == descriptionIndex, last.count < UInt32.max {
            descriptionRuns[descriptionRuns.count - 1].count += 1
        } else {
            descriptionRuns.append((1, descriptionIndex))
        }
        count += 1
        totalBytes += UInt64(size)  // Below count × 2^32 < 2^62.
        duration = newDuration
    }

    /// Lengthens the last sample so that the next one starts at `decodeTime` (a gap between
    /// fragments, as `tfdt` states it). Does nothing when there is no gap, no sample, or
    /// when the lengthened duration would not fit 32 bits.
    mutating func extendLastSample(toReach decodeTime: UInt64) {
        guard decodeTime > duration, let last = timeToSample.last else { return }
        let (sum, overflow) = UInt64(last.sampleDelta).addingReportingOverflow(decodeTime - duration)
        guard !overflow, let delta = UInt32(exactly: sum) else { return }
        if last.sampleCount == 1 {
            timeToSample[timeToSample.count - 1].sampleDelta = delta
        } else {
            timeToSample[timeToSample.count - 1].sampleCount -= 1
            timeToSample.append(.init(sampleCount: 1, sampleDelta: delta))
        }
        duration = decodeTime
    }

    /// Appends every sample of `table` (checked by ``SampleTable/init(boxes:fileLength:excluding:)``),
    /// its bytes in its chunks of source `source`, each sample's description index mapped
    /// by `descriptionIndex`.
    ///
    /// Into an empty table this costs O(runs + chunks) and shares the input's arrays (sizes,
    /// sync samples, chunk offsets) instead of copying them: the tables come out exactly
    /// as appending the samples one by one makes them (a test compares the two). Otherwise
    /// the samples are appended one by one.
    mutating func append(contentsOf table: SampleTable, source: Int, descriptionIndex: (UInt32) -> UInt32) throws {
        guard table.sampleCount > 0 else { return }
        guard count == 0, borrowed == nil else {
            for sample in try SampleIndex(table: table) {
                try append(size: sample.size, duration: sample.duration, compositionOffset: sample.compositionOffset,
                           isSync: sample.isSync, descriptionIndex: descriptionIndex(sample.descriptionIndex),
                           source: source, offset: sample.offset)
            }
            return
        }
        let boxes = table.boxes
        let total = table.sampleCount  // At most Limits.maximumSampleCount: every count below fits 32 bits.
        if let numbers = boxes.syncSamples?.sampleNumbers {
            // The cursor walks the numbers in order (SampleIndex refuses the same table).
            for i in numbers.indices.dropFirst() where numbers[i] <= numbers[i - 1] {
                let location = boxes.locations[.stss]
                throw ISOBMFFError(.invalidSampleTable, "sync sample \(numbers[i]) follows \(numbers[i - 1]): the "
                                   + "table is not in increasing order", path: location?.path ?? "stbl",
                                   offset: location?.offset)
            }
            if numbers.count != total {
                isAllSync = false
                syncSampleNumbers = numbers
            }
        }
        for entry in boxes.timeToSample.entries where entry.sampleCount > 0 {
            if let last = timeToSample.last, last.sampleDelta == entry.sampleDelta {
                timeToSample[timeToSample.count - 1].sampleCount += entry.sampleCount  // Sum ≤ total.
            } else {
                timeToSample.append(entry)
            }
        }
        if let ctts = boxes.compositionOffsets {
            var runs: [(count: UInt32, offset: Int64)] = []
            for entry in ctts.entries where entry.sampleCount > 0 {
                let offset = entry.offset
                if let last = runs.last, last.offset == offset {
                    runs[runs.count - 1].count += entry.sampleCount  // Sum ≤ total.
                } else {
                    runs.append((entry.sampleCount, offset))
                }
            }
            if runs.contains(where: { $0.offset != 0 }) { compositionRuns = runs }
        }
        let sizes = boxes.sampleSizes
        if sizes.constantSize != 0 {
            constantSize = sizes.constantSize
        } else if let first = sizes.sizes.first, sizes.sizes.allSatisfy({ $0 == first }) {
            constantSize = first
        } else {
            constantSize = nil
            sampleSizes = sizes.sizes.count == total ? sizes.sizes : Array(sizes.sizes.prefix(total))
        }
        let runs = boxes.sampleToChunk.entries
        for (i, run) in runs.enumerated() {
            let end = i + 1 < runs.count ? Int(runs[i + 1].firstChunk) : boxes.chunkOffsets.offsets.count + 1
            let samples = UInt32(truncatingIfNeeded: (end - Int(run.firstChunk)) * Int(run.samplesPerChunk))
            guard samples > 0 else { continue }
            let index = descriptionIndex(run.sampleDescriptionIndex)
            if let last = descriptionRuns.last, last.index == index {
                descriptionRuns[descriptionRuns.count - 1].count += samples  // Sum ≤ total.
            } else {
                descriptionRuns.append((samples, index))
            }
        }
        borrowed = (table, source)
        count = total
        totalBytes = table.totalSampleBytes
        duration = table.totalDuration
    }

    /// The `ctts` box, or nil when every offset is 0. Version 1 (signed) when an offset is
    /// negative, else version 0.
    public var compositionOffsetBox: CompositionOffsetBox? { compositionOffsetBox(shiftedBy: 0) }

    /// The `ctts` box with `shift` added to every offset (see
    /// ``MovieWriter``: a track with edits gets non-negative offsets).
    func compositionOffsetBox(shiftedBy shift: Int64) -> CompositionOffsetBox? {
        guard !compositionRuns.isEmpty else { return nil }
        let negative = compositionRuns.contains { $0.offset &+ shift < 0 }
        return CompositionOffsetBox(version: negative ? 1 : 0, entries: compositionRuns.map {
            .init(sampleCount: $0.count, sampleOffset: UInt32(truncatingIfNeeded: $0.offset &+ shift))
        })
    }

    /// The most negative composition offset, negated; 0 when none is negative. O(runs).
    var negativeOffsetSpan: Int64 {
        Swift.max(0, -(compositionRuns.lazy.map(\.offset).min() ?? 0))
    }

    /// Where the presentation of the samples ends, in media ticks: the largest decode time +
    /// composition offset + duration of a sample (0 for no sample); the media duration
    /// when every offset is 0. nil when that sum leaves 0..<2^63 ticks. O(`stts` runs +
    /// `ctts` runs): within a stretch where both runs hold, the last sample ends last.
    var presentationEnd: UInt64? {
        guard !compositionRuns.isEmpty else { return duration }
        var end: Int64 = 0
        var decodeTime: Int64 = 0
        var timing = (run: 0, used: UInt32(0))
        var composition = (run: 0, used: UInt32(0))
        while timing.run < timeToSample.count, composition.run < compositionRuns.count {
            let delta = timeToSample[timing.run]
            let offset = compositionRuns[composition.run]
            let taken = Swift.min(delta.sampleCount - timing.used, offset.count - composition.used)
            // `taken` samples of one duration and one offset: the last of them ends last.
            let span = UInt64(taken).multipliedReportingOverflow(by: UInt64(delta.sampleDelta))
            guard !span.overflow, let ticks = Int64(exactly: span.partialValue) else { return nil }
            let next = decodeTime.addingReportingOverflow(ticks)
            guard !next.overflow else { return nil }
            decodeTime = next.partialValue
            if taken > 0 {
                let last = decodeTime.addingReportingOverflow(offset.offset)
                guard !last.overflow else { return nil }
                end = Swift.max(end, last.partialValue)
            }
            timing.used += taken
            composition.used += taken
            if timing.used == delta.sampleCount { timing = (timing.run + 1, 0) }
            if composition.used == offset.count { composition = (composition.run + 1, 0) }
        }
        return UInt64(exactly: end)
    }

    /// The `stss` box, or nil when every sample is a sync sample.
    public var syncSampleBox: SyncSampleBox? {
        isAllSync ? nil : SyncSampleBox(sampleNumbers: syncSampleNumbers)
    }

    /// The `stsz` box: a constant size when all sizes are equal (and not 0). What the
    /// reader's tables hold; the writer decides per track (`write(sampleSizesTo:allowingConstantSize:)`).
    public var sampleSizeBox: SampleSizeBox {
        if let constantSize { return SampleSizeBox(constantSize: constantSize, sampleCount: UInt32(count)) }
        return SampleSizeBox(sizes: sampleSizes)
    }

    /// Whether the written `stsz` lists a size per sample: unless the track may use the
    /// constant form and its samples share one size.
    func listsSampleSizes(allowingConstantSize: Bool) -> Bool {
        constantSize == nil || !allowingConstantSize
    }

    /// Writes `stsz` (ISO/IEC 14496-12 § 8.7.3.2): one `sample_size` for all samples only
    /// when `allowingConstantSize` (uncompressed audio) and they share it; else a size per
    /// sample, a shared size repeated as it is written, without an array of it.
    func write(sampleSizesTo writer: inout BoxWriter, allowingConstantSize: Bool) {
        guard let constantSize, !allowingConstantSize else {
            sampleSizeBox.write(to: &writer)
            return
        }
        writer.fullBox(.stsz, version: 0, flags: 0) { w in
            w.write(UInt32(0))  // sample_size 0: the sizes follow.
            w.write(UInt32(count))  // At most Limits.maximumSampleCount < 2^32.
            for _ in 0..<count { w.write(constantSize) }
        }
    }

    /// Walks the samples in order.
    func makeCursor() -> Cursor { Cursor(table: self) }

    /// One sample as the cursor yields it.
    struct Entry {
        var size: UInt32
        var duration: UInt32
        var compositionOffset: Int64
        var isSync: Bool
        var descriptionIndex: UInt32
    }

    /// A walk over the runs: O(1) a sample, no per-sample storage.
    struct Cursor {
        let table: SampleTableWriter
        private(set) var index = 0
        private(set) var decodeTime: UInt64 = 0
        private var timing = (run: 0, used: UInt32(0))
        private var composition = (run: 0, used: UInt32(0))
        private var description = (run: 0, used: UInt32(0))
        private var nextSync = 0

        init(table: SampleTableWriter) { self.table = table }

        /// The next sample, without moving.
        func peek() -> Entry? {
            guard index < table.count else { return nil }
            let offset = table.compositionRuns.isEmpty ? 0 : table.compositionRuns[composition.run].offset
            let isSync = table.isAllSync
                || (nextSync < table.syncSampleNumbers.count && Int(table.syncSampleNumbers[nextSync]) == index + 1)
            return Entry(size: table.constantSize ?? table.sampleSizes[index],
                         duration: table.timeToSample[timing.run].sampleDelta, compositionOffset: offset,
                         isSync: isSync, descriptionIndex: table.descriptionRuns[description.run].index)
        }

        /// The next sample, moving past it.
        mutating func next() -> Entry? {
            guard let entry = peek() else { return nil }
            index += 1
            decodeTime += UInt64(entry.duration)  // Below the table's duration, checked on append.
            timing.used += 1
            if timing.used == table.timeToSample[timing.run].sampleCount { timing = (timing.run + 1, 0) }
            if !table.compositionRuns.isEmpty {
                composition.used += 1
                if composition.used == table.compositionRuns[composition.run].count {
                    composition = (composition.run + 1, 0)
                }
            }
            description.used += 1
            if description.used == table.descriptionRuns[description.run].count {
                description = (description.run + 1, 0)
            }
            if !table.isAllSync, entry.isSync { nextSync += 1 }
            return entry
        }

        /// Moves past the samples of one chunk cut by bytes only (no time span): as many as
        /// fit in `maximumBytes` (at least one) and share the next sample's description.
        /// The same samples as ``next()`` one at a time, in a tight loop over the sizes:
        /// a 10-hour track's 1.7 M samples in a few milliseconds.
        mutating func takeChunk(maximumBytes: UInt64) -> (count: Int, bytes: UInt64, descriptionIndex: UInt32)? {
            guard index < table.count else { return nil }
            let run = table.descriptionRuns[description.run]
            let available = Int(run.count - description.used)  // ≥ 1: runs are left when used up.
            var count = 0
            var bytes: UInt64 = 0
            if let size = table.constantSize {
                let fitting = size == 0 ? UInt64(available) : maximumBytes / UInt64(size)
                count = Swift.max(1, Int(Swift.min(UInt64(available), fitting)))
                bytes = UInt64(count) * UInt64(size)  // < 2^30 samples of < 2^32 bytes.
            } else {
                let sizes = table.sampleSizes
                while count < available {
                    let next = bytes + UInt64(sizes[index + count])
                    if count > 0 && next > maximumBytes { break }
                    bytes = next
                    count += 1
                }
            }
            advance(by: count)
            return (count, bytes, run.index)
        }

        /// Moves past `count` samples (at most those left), in O(runs passed).
        private mutating func advance(by count: Int) {
            index += count
            /// Moves `position` through runs of the given sample counts, calling `passed`
            /// with each run's index and the samples taken from it.
            func skip(_ position: inout (run: Int, used: UInt32), _ runCount: (Int) -> UInt32,
                      _ passed: (Int, Int) -> Void = { _, _ in }) {
                var left = count
                while left > 0 {
                    let total = runCount(position.run)
                    let take = Swift.min(left, Int(total - position.used))
                    passed(position.run, take)
                    left -= take
                    position.used += UInt32(take)
                    if position.used == total { position = (position.run + 1, 0) }
                }
            }
            let timeToSample = table.timeToSample
            skip(&timing, { timeToSample[$0].sampleCount }) { run, taken in
                decodeTime += UInt64(taken) * UInt64(timeToSample[run].sampleDelta)  // Below the table's duration.
            }
            let compositionRuns = table.compositionRuns
            if !compositionRuns.isEmpty { skip(&composition, { compositionRuns[$0].count }) }
            let descriptionRuns = table.descriptionRuns
            skip(&description, { descriptionRuns[$0].count })
            if !table.isAllSync {
                // The next sync number past the samples taken (numbers are 1-based).
                let numbers = table.syncSampleNumbers
                var low = nextSync
                var high = numbers.count
                while low < high {
                    let middle = (low + high) / 2
                    if Int(numbers[middle]) <= index { low = middle + 1 } else { high = middle }
                }
                nextSync = low
            }
        }
    }

    /// Maps the track's sample bytes, concatenated in sample order, back to the sources:
    /// successive calls must ask for successive ranges.
    struct LocationCursor {
        /// The chunks of a table appended whole, while some are left.
        private var chunks: SampleTable.ChunkIterator?
        private let chunkSource: Int
        private let locations: [Location]
        private var run = 0
        /// The piece being taken from, and how much of it is taken.
        private var current: Location?
        private var used: UInt64 = 0

        init(_ table: SampleTableWriter) {
            chunks = table.borrowed?.table.makeChunkIterator()
            chunkSource = table.borrowed?.source ?? 0
            locations = table.locations
        }

        private mutating func nextLocation() -> Location? {
            while let chunk = chunks?.next() {
                if chunk.byteCount > 0 { return Location(source: chunkSource, offset: chunk.offset, length: chunk.byteCount) }
            }
            chunks = nil
            guard run < locations.count else { return nil }
            run += 1
            return locations[run - 1]
        }

        /// Calls `body` with the source pieces of the next `count` bytes.
        mutating func take(_ count: UInt64, _ body: (Location) throws -> Void) rethrows {
            var left = count
            while left > 0 {
                if current == nil {
                    current = nextLocation()
                    used = 0
                }
                guard let location = current else { return }
                let piece = min(left, location.length - used)
                try body(Location(source: location.source, offset: location.offset + used, length: piece))
                used += piece
                left -= piece
                if used == location.length { current = nil }
            }
        }
    }
}
