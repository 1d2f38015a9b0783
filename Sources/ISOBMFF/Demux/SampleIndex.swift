/// The samples of one track as a random-access collection, computed on demand from the
/// track's compressed tables (ISO/IEC 14496-12 § 8.6.1 `stts`/`ctts`, § 8.7.3 `stsz`,
/// § 8.7.4 `stsc`, § 8.7.5 `stco`/`co64`, § 8.6.2 `stss`), never expanded into an array of
/// ``Sample`` values.
///
/// Memory is that of the tables: a run of the time-to-sample, composition-offset and
/// sample-to-chunk tables costs 16–24 bytes (a run holds its first sample and, for timing,
/// its first decode time, so that a lookup is a binary search); each chunk costs 8 bytes;
/// each sample 4 bytes only when sizes differ (`stsz` lists them) and 4 bytes per sync
/// sample when `stss` is present. A 10-hour AAC track of 1.7 M samples costs about 7 MB,
/// what its `stsz` and `stco` take in the file, instead of 1.7 M × 40 bytes.
///
/// Costs:
/// - ``count``: O(1).
/// - `self[i]`: O(log runs) binary searches, plus the sizes of the samples before `i` in
///   its chunk when sizes vary (at most one chunk's samples).
/// - Iterating (`for sample in index`): O(1) per sample; the iterator carries the running
///   offset and decode time.
/// - ``index(decodingAt:)``, ``syncIndex(atOrBefore:)``: O(log n) binary searches.
/// - ``index(presentingAt:)``: O(log n) to find the first candidate, then a scan of the
///   samples whose decode times lie within the spread of the composition offsets (plus the
///   longest duration) before the time: with B-frames a few frames; without `ctts` none.
///   A track whose offsets span a long time (a hostile or unusual `ctts`) makes that scan
///   proportionally longer.
///
/// Times are in the media timescale, with no edit list applied (``TrackPresentation`` says
/// what plays).
public struct SampleIndex: RandomAccessCollection, Sendable {
    /// Positions are sample numbers counted from 0 in decode order.
    public typealias Index = Int

    // The runs store 32-bit sample and chunk numbers (a checked table has at most
    // Limits.maximumSampleCount = 2^30 samples, and no more chunks than samples) so that a
    // run costs 16 or 20 bytes: a 10-hour track with a chunk per few samples has hundreds
    // of thousands of stsc runs.

    /// A run of samples with one duration (`stts` entry), with the decode time of its first.
    struct TimeRun: Sendable {
        var firstDecodeTime: UInt64
        var storedFirstSample: UInt32
        var delta: UInt32
        var firstSample: Int { Int(storedFirstSample) }

        init(firstSample: Int, firstDecodeTime: UInt64, delta: UInt32) {
            self.firstDecodeTime = firstDecodeTime
            storedFirstSample = UInt32(truncatingIfNeeded: firstSample)  // At most 2^30.
            self.delta = delta
        }
    }

    /// A run of samples with one composition offset (`ctts` entry).
    struct OffsetRun: Sendable {
        var storedFirstSample: UInt32
        /// The offset as stored (``CompositionOffsetBox/offset(coded:)`` reads it).
        var rawOffset: UInt32
        var firstSample: Int { Int(storedFirstSample) }
        var offset: Int64 { CompositionOffsetBox.offset(coded: rawOffset) }

        init(firstSample: Int, rawOffset: UInt32) {
            storedFirstSample = UInt32(truncatingIfNeeded: firstSample)  // At most 2^30.
            self.rawOffset = rawOffset
        }
    }

    /// A run of chunks with one sample count (`stsc` entry), with the first sample of its
    /// first chunk.
    struct ChunkRun: Sendable {
        var storedFirstChunk: UInt32
        /// The chunk after the run's last.
        var storedEndChunk: UInt32
        var storedFirstSample: UInt32
        var storedSamplesPerChunk: UInt32
        var descriptionIndex: UInt32
        var firstChunk: Int { Int(storedFirstChunk) }
        var endChunk: Int { Int(storedEndChunk) }
        var firstSample: Int { Int(storedFirstSample) }
        var samplesPerChunk: Int { Int(storedSamplesPerChunk) }

        init(firstChunk: Int, endChunk: Int, firstSample: Int, samplesPerChunk: Int, descriptionIndex: UInt32) {
            // Chunk numbers come from 32-bit stsc fields; sample numbers are at most 2^30.
            storedFirstChunk = UInt32(truncatingIfNeeded: firstChunk)
            storedEndChunk = UInt32(truncatingIfNeeded: endChunk)
            storedFirstSample = UInt32(truncatingIfNeeded: firstSample)
            storedSamplesPerChunk = UInt32(truncatingIfNeeded: samplesPerChunk)
            self.descriptionIndex = descriptionIndex
        }
    }

    let timeRuns: [TimeRun]
    let offsetRuns: [OffsetRun]
    let chunkRuns: [ChunkRun]
    let chunkOffsets: [UInt64]
    let sizes: SampleSizeBox
    /// 1-based sync sample numbers, strictly increasing; nil when every sample is a sync sample.
    let syncSamples: [UInt32]?
    /// 1-based partial sync sample numbers (`stps`), sorted; empty without one.
    let partialSyncSamples: [UInt32]
    /// The smallest and largest composition offsets and the longest duration, which bound
    /// the scan of ``index(presentingAt:)``.
    let minimumOffset: Int64
    let maximumOffset: Int64
    let maximumDuration: UInt32

    /// The number of samples. O(1).
    public let count: Int
    /// The decode time of the first sample: 0 for a regular track, the first fragment's
    /// `tfdt` for a fragmented one.
    public let firstDecodeTime: UInt64
    /// The decode time at which the last sample ends: ``firstDecodeTime`` plus the sum of
    /// the durations.
    public let endDecodeTime: UInt64

    /// The least and greatest composition offsets (`ctts` or the fragments' offsets);
    /// `0...0` when samples are presented in decode order. A negative lower bound means
    /// some samples are presented before they are decoded (offsets are signed whatever the
    /// `ctts` version: ``CompositionOffsetBox/offset(coded:)``).
    public var compositionOffsetRange: ClosedRange<Int64> { minimumOffset...maximumOffset }

    /// Where the presentation of the media ends, counted like ``totalDuration`` from
    /// ``firstDecodeTime``: the decode times' end moved by the largest composition offset
    /// when it is positive (B-frames are presented after they are decoded), a bound on the
    /// latest `pts + duration`. What an edit list may present of the media. O(1).
    public var presentationEnd: UInt64 {
        let (end, overflow) = totalDuration.addingReportingOverflow(UInt64(Swift.max(0, maximumOffset)))
        return overflow ? UInt64.max : end
    }

    /// Where the presentation of the media ends, counted from ``firstDecodeTime``: the latest
    /// `pts + duration` of any sample, exactly, where ``presentationEnd`` is a bound (it adds
    /// the largest composition offset to the decode times' end, 0.08 s past the last frame of
    /// an HLS segment whose B-frames' offsets reach 0.16 s). What ffprobe's packets end at
    /// (`pts_time + duration_time`), and where a fragmented track's edit of duration 0 ends
    /// (``MovieReader/presentation(of:samples:)``). Never below 0. O(k log runs), k the samples
    /// decoded within the largest offset and duration of the end: scanned back from the
    /// last, it stops where no earlier sample can end later.
    public var latestPresentationEnd: UInt64 {
        var latest: Int64 = 0
        var position = count - 1
        while position >= 0 {
            let sample = self[position]
            // Decode times of a checked table lie in [first, end] and below 2^63 in practice;
            // clamped, so that a hostile one cannot trap.
            let start = Int64(clamping: sample.decodeTime - firstDecodeTime)  // ≥ first: checked sums.
            let bound = start.addingReportingOverflow(Swift.max(0, maximumOffset))
            guard !bound.overflow else { return presentationEnd }
            // No sample decoded at or before this one ends after this bound.
            let reach = bound.partialValue.addingReportingOverflow(Int64(maximumDuration))
            if !reach.overflow, reach.partialValue <= latest { break }
            let (presented, o1) = start.addingReportingOverflow(sample.compositionOffset)
            let (end, o2) = presented.addingReportingOverflow(Int64(sample.duration))
            guard !o1, !o2 else { return presentationEnd }
            latest = Swift.max(latest, end)
            position -= 1
        }
        return UInt64(latest)  // ≥ 0.
    }

    /// The sum of the sample durations, in the media timescale.
    public var totalDuration: UInt64 { endDecodeTime - firstDecodeTime }  // end ≥ first: checked sum.

    /// Samples per second over the whole track, ``count`` × `timescale` / ``totalDuration``:
    /// a video track's average frame rate (what ffprobe prints as `avg_frame_rate`); nil when
    /// the samples last no time or `timescale` is 0.
    public func averageRate(timescale: UInt32) -> Double? {
        guard totalDuration > 0, timescale > 0 else { return nil }
        return Double(count) * Double(timescale) / Double(totalDuration)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// Indexes the samples of a checked table.
    ///
    /// - Parameters:
    ///   - table: tables whose consistency ``SampleTable/init(boxes:fileLength:excluding:)``
    ///     checked (every sample has a size, a duration and a chunk inside the file).
    ///   - firstDecodeTime: the decode time of the first sample (a fragment's `tfdt`).
    /// - Throws: `.invalidSampleTable` when `stss` is not in increasing order, or when the
    ///   decode times would pass 2^64.
    public init(table: SampleTable, firstDecodeTime: UInt64 = 0) throws {
        let boxes = table.boxes
        func fail(_ box: FourCC, _ message: String) -> ISOBMFFError {
            let location = boxes.locations[box]
            return ISOBMFFError(.invalidSampleTable, message, path: location?.path ?? "stbl", offset: location?.offset)
        }
        count = table.sampleCount
        self.firstDecodeTime = firstDecodeTime
        endDecodeTime = try checkedAdd(firstDecodeTime, table.totalDuration,
                                       fail(.stts, "the decode times pass 2^64 (first decode time \(firstDecodeTime))"))

        // stts: SampleTable checked that the counts add up to `count` (at most 2^30) and the
        // durations to less than 2^64, so neither sum below overflows.
        var timeRuns: [TimeRun] = []
        timeRuns.reserveCapacity(Swift.min(boxes.timeToSample.entries.count, Limits.initialTableCapacity))
        var sample = 0
        var time = firstDecodeTime
        var longest: UInt32 = 0
        for entry in boxes.timeToSample.entries where entry.sampleCount > 0 {
            timeRuns.append(TimeRun(firstSample: sample, firstDecodeTime: time, delta: entry.sampleDelta))
            sample += Int(entry.sampleCount)
            time += UInt64(entry.sampleCount) * UInt64(entry.sampleDelta)
            longest = Swift.max(longest, entry.sampleDelta)
        }
        self.timeRuns = timeRuns
        maximumDuration = longest

        // ctts: SampleTable checked that it covers exactly `count` samples.
        var offsetRuns: [OffsetRun] = []
        var low = Int64.max
        var high = Int64.min
        let ctts = boxes.compositionOffsets
        sample = 0
        for entry in ctts?.entries ?? [] where entry.sampleCount > 0 {
            let run = OffsetRun(firstSample: sample, rawOffset: entry.sampleOffset)
            let offset = run.offset
            offsetRuns.append(run)
            sample += Int(entry.sampleCount)
            low = Swift.min(low, offset)
            high = Swift.max(high, offset)
        }
        self.offsetRuns = offsetRuns
        minimumOffset = offsetRuns.isEmpty ? 0 : low
        maximumOffset = offsetRuns.isEmpty ? 0 : high

        // stsc: SampleTable checked first chunks (1-based, increasing, within the chunk
        // count) and that the runs hold exactly `count` samples.
        var chunkRuns: [ChunkRun] = []
        let runs = boxes.sampleToChunk.entries
        let chunkCount = boxes.chunkOffsets.offsets.count
        sample = 0
        for (i, run) in runs.enumerated() {
            let first = Int(run.firstChunk) - 1
            let next = i + 1 < runs.count ? Int(runs[i + 1].firstChunk) - 1 : chunkCount
            let perChunk = Int(run.samplesPerChunk)
            if perChunk > 0 {
                chunkRuns.append(ChunkRun(firstChunk: first, endChunk: next, firstSample: sample, samplesPerChunk: perChunk,
                                          descriptionIndex: run.sampleDescriptionIndex))
            }
            sample += (next - first) * perChunk  // The total is `count`, checked by SampleTable.
        }
        self.chunkRuns = chunkRuns
        chunkOffsets = boxes.chunkOffsets.offsets
        sizes = boxes.sampleSizes

        if let numbers = boxes.syncSamples?.sampleNumbers {
            // SampleTable checked that every number names a sample; binary search needs order.
            for i in numbers.indices.dropFirst() where numbers[i] <= numbers[i - 1] {
                throw fail(.stss, "sync sample \(numbers[i]) follows \(numbers[i - 1]): the table is not in "
                           + "increasing order")
            }
            syncSamples = numbers
        } else {
            syncSamples = nil
        }
        partialSyncSamples = (boxes.partialSyncSamples?.sampleNumbers ?? []).sorted()
    }

    // MARK: - Random access

    /// The sample at `position` (0-based, decode order). O(log runs), plus the sizes of the
    /// samples before it in its chunk when sizes vary.
    public subscript(position: Int) -> Sample {
        precondition(position >= 0 && position < count, "sample \(position) out of 0..<\(count)")
        let time = timeRuns[Self.lastRun(in: timeRuns, atOrBefore: position, key: \.firstSample)]
        let decodeTime = time.firstDecodeTime + UInt64(position - time.firstSample) * UInt64(time.delta)
        var offset: Int64 = 0
        if !offsetRuns.isEmpty {
            offset = offsetRuns[Self.lastRun(in: offsetRuns, atOrBefore: position, key: \.firstSample)].offset
        }
        let run = chunkRuns[Self.lastRun(in: chunkRuns, atOrBefore: position, key: \.firstSample)]
        let inRun = position - run.firstSample
        let chunk = run.firstChunk + inRun / run.samplesPerChunk
        let chunkStart = position - inRun % run.samplesPerChunk
        var byteOffset = chunkOffsets[chunk]
        if sizes.constantSize != 0 {
            byteOffset += UInt64(position - chunkStart) * UInt64(sizes.constantSize)
        } else {
            for s in chunkStart..<position { byteOffset += UInt64(sizes.sizes[s]) }
        }
        // Sums stay below the file's length: SampleTable checked every chunk ends inside it.
        return Sample(offset: byteOffset, size: sizes.size(ofSample: position), decodeTime: decodeTime,
                      compositionOffset: offset, duration: time.delta, isSync: isSync(position),
                      descriptionIndex: run.descriptionIndex)
    }

    /// Whether sample `position` is a sync sample (false for a position outside the
    /// collection). O(log sync samples).
    public func isSync(_ position: Int) -> Bool {
        guard position >= 0 && position < count else { return false }
        guard let syncSamples else { return true }
        let number = UInt32(truncatingIfNeeded: position + 1)  // At most maximumSampleCount.
        let i = Self.partition(syncSamples.count) { syncSamples[$0] <= number }
        return i > 0 && syncSamples[i - 1] == number
    }

    /// Whether sample `position` is a partial sync sample (QuickTime's `stps`: an open GOP's
    /// key frame, its leading pictures needing the GOP before), as ffprobe marks key frames
    /// beside the sync samples. O(log partial sync samples).
    public func isPartialSync(_ position: Int) -> Bool {
        guard position >= 0 && position < count else { return false }
        let number = UInt32(truncatingIfNeeded: position + 1)  // At most maximumSampleCount.
        let i = Self.partition(partialSyncSamples.count) { partialSyncSamples[$0] <= number }
        return i > 0 && partialSyncSamples[i - 1] == number
    }

    // MARK: - Lookups by time

    /// The sample being decoded at `time`: the last sample whose decode time is at or before
    /// `time`; nil before the first sample or at or after ``endDecodeTime``. O(log runs).
    public func index(decodingAt time: UInt64) -> Int? {
        var steps = 0
        return index(decodingAt: time, steps: &steps)
    }

    /// The sample presented at `time` (decode time plus composition offset, in the media
    /// timescale, no edit list applied): the one whose presentation interval
    /// `[pts, pts + duration)` holds `time`, the latest presented when several do; nil when
    /// none does. O(log n) plus the samples within the composition-offset window (see the
    /// type's discussion).
    public func index(presentingAt time: Int64) -> Int? {
        var steps = 0
        return index(presentingAt: time, steps: &steps)
    }

    /// The sync sample at or before `position`: where decoding must start to show it; nil
    /// when no sync sample precedes it. O(log sync samples).
    public func syncIndex(atOrBefore position: Int) -> Int? {
        var steps = 0
        return syncIndex(atOrBefore: position, steps: &steps)
    }

    /// ``index(decodingAt:)``, counting the probes of its binary searches in `steps`.
    func index(decodingAt time: UInt64, steps: inout Int) -> Int? {
        decodePosition(at: time, steps: &steps)?.position
    }

    /// The sample being decoded at `time` and the index of its `stts` run.
    func decodePosition(at time: UInt64, steps: inout Int) -> (position: Int, run: Int)? {
        guard count > 0, time >= firstDecodeTime, time < endDecodeTime else { return nil }
        let r = Self.partition(timeRuns.count, steps: &steps) { timeRuns[$0].firstDecodeTime <= time } - 1
        let run = timeRuns[r]
        let end = r + 1 < timeRuns.count ? timeRuns[r + 1].firstSample : count
        guard run.delta > 0 else { return (end - 1, r) }  // Zero-length samples: the last of the run.
        // time < the next run's first decode time, so the quotient stays within the run.
        return (Swift.min(run.firstSample + Int((time - run.firstDecodeTime) / UInt64(run.delta)), end - 1), r)
    }

    /// ``index(presentingAt:)``, counting the binary-search probes and the samples scanned:
    /// one search of the `stts` runs, one of the `ctts` runs, then the window.
    func index(presentingAt time: Int64, steps: inout Int) -> Int? {
        guard count > 0 else { return nil }
        // A sample presenting `time` has pts ≤ time < pts + duration, and pts = dts + offset
        // with offset in [minimumOffset, maximumOffset]: its decode time lies in
        // (time − maximumOffset − maximumDuration, time − minimumOffset].
        let (upperBound, o1) = time.subtractingReportingOverflow(minimumOffset)
        let (lower1, o2) = time.subtractingReportingOverflow(maximumOffset)
        let (lowerBound, o3) = lower1.subtractingReportingOverflow(Int64(maximumDuration))
        guard !o1, !o2, !o3, upperBound >= 0, UInt64(upperBound) >= firstDecodeTime else { return nil }
        var position = 0
        var t = 0
        if lowerBound > 0, UInt64(lowerBound) >= firstDecodeTime {
            guard let start = decodePosition(at: UInt64(lowerBound), steps: &steps) else { return nil }
            (position, t) = start
        }
        var o = 0
        if !offsetRuns.isEmpty && position > 0 {
            o = Self.partition(offsetRuns.count, steps: &steps) { offsetRuns[$0].firstSample <= position } - 1
        }
        var dts = timeRuns[t].firstDecodeTime + UInt64(position - timeRuns[t].firstSample) * UInt64(timeRuns[t].delta)
        var best: (index: Int, pts: Int64)?
        // Decode times of a checked table stay below endDecodeTime < 2^64; converting to
        // Int64 clamps (real times are far below 2^63).
        while position < count && dts <= UInt64(upperBound) {
            steps += 1
            while t + 1 < timeRuns.count && timeRuns[t + 1].firstSample <= position { t += 1 }
            var offset: Int64 = 0
            if !offsetRuns.isEmpty {
                while o + 1 < offsetRuns.count && offsetRuns[o + 1].firstSample <= position { o += 1 }
                offset = offsetRuns[o].offset
            }
            let delta = timeRuns[t].delta
            let (pts, overflow) = Int64(clamping: dts).addingReportingOverflow(offset)
            if !overflow && pts <= time {
                let (end, endOverflow) = pts.addingReportingOverflow(Int64(delta))
                if endOverflow || time < end || (delta == 0 && pts == time), best.map({ pts > $0.pts }) ?? true {
                    best = (position, pts)
                }
            }
            dts += UInt64(delta)
            position += 1
        }
        return best?.index
    }

    /// ``syncIndex(atOrBefore:)``, counting the probes of its binary search in `steps`.
    func syncIndex(atOrBefore position: Int, steps: inout Int) -> Int? {
        guard position >= 0, count > 0 else { return nil }
        let position = Swift.min(position, count - 1)
        guard let syncSamples else { return position }
        let number = UInt32(truncatingIfNeeded: position + 1)  // At most maximumSampleCount.
        let i = Self.partition(syncSamples.count, steps: &steps) { syncSamples[$0] <= number }
        return i > 0 ? Int(syncSamples[i - 1]) - 1 : nil
    }

    /// The number of leading elements of `0..<count` for which `isBefore` holds, which must
    /// hold for a prefix: a binary search of ⌈log2(count + 1)⌉ probes.
    static func partition(_ count: Int, steps: inout Int, _ isBefore: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            steps += 1
            let middle = low + (high - low) / 2
            if isBefore(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func partition(_ count: Int, _ isBefore: (Int) -> Bool) -> Int {
        var steps = 0
        return partition(count, steps: &steps, isBefore)
    }

    /// The index of the last run whose key is at or before `position`; runs start at 0, so
    /// one always is.
    static func lastRun<Run>(in runs: [Run], atOrBefore position: Int, key: KeyPath<Run, Int>) -> Int {
        partition(runs.count) { runs[$0][keyPath: key] <= position } - 1
    }
}
