/// A track's sample tables, checked as a whole so that later code can trust them: every
/// sample has a size, a duration and a chunk, and every chunk lies inside the file.
///
/// The checks follow ISO/IEC 14496-12 § 8.7.4 (`stsc` first chunks start at 1 and
/// increase), § 8.6.1.2 and § 8.7.3 (`stts` and `stsz` describe the same samples).
public struct SampleTable: Sendable {
    /// The tables that were checked.
    public let boxes: SampleTableBoxes
    /// The number of samples, equal in `stts`, `stsz` and `stsc`.
    public let sampleCount: Int
    /// The total size of all samples in bytes.
    public let totalSampleBytes: UInt64
    /// The sum of all `stts` durations, in the media timescale.
    public let totalDuration: UInt64

    /// One chunk: a run of consecutive samples stored contiguously.
    public struct Chunk: Sendable, Equatable {
        /// The absolute file offset of the chunk's first sample.
        public var offset: UInt64
        /// The chunk's size in bytes: the sum of its samples' sizes.
        public var byteCount: UInt64
        /// 0-based index of the chunk's first sample.
        public var firstSample: Int
        /// The number of samples in the chunk.
        public var sampleCount: Int
        /// 1-based index into `stsd`.
        public var sampleDescriptionIndex: UInt32
    }

    /// The largest sample count accepted (``Limits/maximumSampleCount``).
    public static let maximumSampleCount = Limits.maximumSampleCount

    /// Checks `boxes` against each other and against the file.
    ///
    /// - Parameters:
    ///   - boxes: one track's parsed tables, from ``Track/sampleTable()`` or ``SampleTableBuilder``.
    ///   - fileLength: every chunk must end at or before it.
    ///   - excluded: byte ranges no sample may overlap (the `moov` box).
    public init(boxes: SampleTableBoxes, fileLength: UInt64, excluding excluded: [Range<UInt64>] = []) throws {
        try self.init(boxes: boxes, fileLength: fileLength, excluding: excluded, withoutDescriptions: false)
    }

    /// Checks `boxes` as ``init(boxes:fileLength:excluding:)`` does; `withoutDescriptions`
    /// when the track's `stsd` is missing or unreadable (``Track/problem``) and `boxes` holds
    /// none: the other tables are checked, but not the description indexes of `stsc`, so that
    /// the samples can be listed with their codec unknown, as ffprobe lists them
    /// (``MovieReader/samplesWithoutDescriptions(of:)``).
    init(boxes: SampleTableBoxes, fileLength: UInt64, excluding excluded: [Range<UInt64>],
         withoutDescriptions: Bool) throws {
        self.boxes = boxes
        func fail(_ box: FourCC, _ message: String) -> ISOBMFFError {
            let location = boxes.locations[box]
            return ISOBMFFError(.invalidSampleTable, message, path: location?.path ?? "stbl", offset: location?.offset)
        }
        let descriptionCount = boxes.sampleDescriptions.entries.count
        guard descriptionCount > 0 || withoutDescriptions else { throw fail(.stsd, "stsd has no sample entries") }
        let chunkCount = boxes.chunkOffsets.offsets.count
        let chunkType: FourCC = boxes.locations[.co64] != nil ? .co64 : .stco

        // stsc: first chunks start at 1, increase, and name existing chunks and entries.
        let runs = boxes.sampleToChunk.entries
        var samplesFromChunks: UInt64 = 0
        for (i, run) in runs.enumerated() {
            if i == 0 && run.firstChunk != 1 {
                throw fail(.stsc, "the first entry starts at chunk \(run.firstChunk), not 1")
            }
            if i > 0 && run.firstChunk <= runs[i - 1].firstChunk {
                throw fail(.stsc, "entry \(i + 1) starts at chunk \(run.firstChunk), not after chunk "
                           + "\(runs[i - 1].firstChunk)")
            }
            if run.firstChunk > chunkCount {
                throw fail(.stsc, "entry \(i + 1) refers to chunk \(run.firstChunk) but \(chunkType) has only "
                           + "\(chunkCount) chunks")
            }
            guard withoutDescriptions
                    || (run.sampleDescriptionIndex >= 1 && run.sampleDescriptionIndex <= descriptionCount) else {
                throw fail(.stsc, "entry \(i + 1) refers to sample description \(run.sampleDescriptionIndex) but "
                           + "stsd has \(descriptionCount)")
            }
            let nextFirst = i + 1 < runs.count ? UInt64(runs[i + 1].firstChunk) : UInt64(chunkCount) + 1
            // The order check above runs for the next entry only on the next iteration.
            guard nextFirst > UInt64(run.firstChunk) else {
                throw fail(.stsc, "entry \(i + 2) starts at chunk \(nextFirst), not after chunk \(run.firstChunk)")
            }
            let chunks = nextFirst - UInt64(run.firstChunk)  // nextFirst > firstChunk, checked just above.
            // Checked: tables built from fragments are not bounded by the moov size limit.
            let (product, productOverflow) = chunks.multipliedReportingOverflow(by: UInt64(run.samplesPerChunk))
            let (sum, sumOverflow) = samplesFromChunks.addingReportingOverflow(product)
            samplesFromChunks = sum
            if productOverflow || sumOverflow || samplesFromChunks > UInt64(Self.maximumSampleCount) {
                throw fail(.stsc, "the chunks hold more than \(Self.maximumSampleCount) samples")
            }
        }
        if runs.isEmpty && chunkCount > 0 {
            throw fail(.stsc, "stsc is empty but \(chunkType) lists \(chunkCount) chunks")
        }

        // The three tables describe the same samples.
        let sizes = boxes.sampleSizes
        let timed = boxes.timeToSample.sampleCount
        guard UInt64(sizes.sampleCount) == samplesFromChunks else {
            throw fail(.stsz, "stsz has \(sizes.sampleCount) samples but the chunks (stsc/\(chunkType)) hold "
                       + "\(samplesFromChunks)")
        }
        guard timed == samplesFromChunks else {
            throw fail(.stts, "stts has \(timed) samples but stsz has \(sizes.sampleCount)")
        }
        if let ctts = boxes.compositionOffsets, ctts.sampleCount != timed {
            throw fail(.ctts, "ctts has \(ctts.sampleCount) samples but stts has \(timed)")
        }
        if let stss = boxes.syncSamples, let bad = stss.sampleNumbers.first(where: { $0 == 0 || UInt64($0) > timed }) {
            throw fail(.stss, "sync sample \(bad) does not exist (the track has \(timed) samples)")
        }
        for sbgp in boxes.sampleToGroups {
            // At most 2^32 entries (a 32-bit count) of 2^32 - 1 samples: below 2^64.
            let grouped = sbgp.entries.reduce(UInt64(0)) { $0 + UInt64($1.sampleCount) }
            if grouped > timed {
                throw fail(.sbgp, "sbgp '\(sbgp.groupingType)' groups \(grouped) samples but the track has \(timed)")
            }
        }
        var duration: UInt64 = 0
        for entry in boxes.timeToSample.entries {
            let (product, overflowed) = UInt64(entry.sampleCount).multipliedReportingOverflow(by: UInt64(entry.sampleDelta))
            let (sum, overflow) = duration.addingReportingOverflow(product)
            if overflowed || overflow { throw fail(.stts, "the sample durations add up past 2^64") }
            duration = sum
        }
        sampleCount = Int(samplesFromChunks)  // At most maximumSampleCount.
        totalDuration = duration

        // Every chunk lies inside the file and outside the excluded ranges.
        var total: UInt64 = 0
        var failure: ISOBMFFError?
        Self.forEachChunk(boxes: boxes) { chunk in
            let (end, overflow) = chunk.offset.addingReportingOverflow(chunk.byteCount)
            if overflow || end > fileLength {
                failure = fail(chunkType, "chunk at byte \(chunk.offset) with \(chunk.byteCount) bytes of samples "
                               + "ends past the end of the file (\(fileLength) bytes)")
                return false
            }
            if chunk.byteCount > 0, let hit = excluded.first(where: { $0.overlaps(chunk.offset..<end) }) {
                failure = fail(chunkType, "chunk at byte \(chunk.offset) overlaps the box at byte "
                               + "\(hit.lowerBound) (\(hit.upperBound - hit.lowerBound) bytes long)")
                return false
            }
            // One track's samples cannot hold more bytes than the file unless chunks overlap,
            // which would let a small file claim 2^30 samples (and that much output).
            let (sum, overflowed) = total.addingReportingOverflow(chunk.byteCount)
            if overflowed || sum > fileLength {
                failure = fail(chunkType, "the chunks hold more bytes of samples than the file's \(fileLength): "
                               + "they overlap")
                return false
            }
            total = sum
            return true
        }
        if let failure { throw failure }
        totalSampleBytes = total
    }

    /// Calls `body` for each chunk in order, with its byte range and samples.
    /// O(samples) when sizes vary. `body` returns false to stop.
    public func forEachChunk(_ body: (Chunk) throws -> Bool) rethrows {
        try Self.forEachChunk(boxes: boxes, body)
    }

    /// The chunks in order, one at a time; several iterators can walk the same table (one
    /// copying, one running ahead to prefetch).
    public func makeChunkIterator() -> ChunkIterator {
        ChunkIterator(boxes: boxes)
    }

    /// Assumes the stsc/stsz consistency `init` checks: every chunk's samples exist.
    private static func forEachChunk(boxes: SampleTableBoxes, _ body: (Chunk) throws -> Bool) rethrows {
        var chunks = ChunkIterator(boxes: boxes)
        while let chunk = chunks.next() {
            guard try body(chunk) else { return }
        }
    }

    /// Walks the chunks of a table whose consistency ``SampleTable/init(boxes:fileLength:excluding:)``
    /// checked. Each step costs O(samples in the chunk) when sizes vary.
    public struct ChunkIterator: IteratorProtocol, Sendable {
        let runs: [SampleToChunkBox.Entry]
        let offsets: [UInt64]
        let sizes: SampleSizeBox
        var run = 0
        var chunkIndex = 0
        var sample = 0

        init(boxes: SampleTableBoxes) {
            runs = boxes.sampleToChunk.entries
            offsets = boxes.chunkOffsets.offsets
            sizes = boxes.sampleSizes
            chunkIndex = runs.isEmpty ? 0 : Int(runs[0].firstChunk) - 1
        }

        public mutating func next() -> Chunk? {
            while run < runs.count {
                let end = run + 1 < runs.count ? Int(runs[run + 1].firstChunk) - 1 : offsets.count
                guard chunkIndex < end else {
                    run += 1
                    continue
                }
                let perChunk = Int(runs[run].samplesPerChunk)
                guard chunkIndex >= 0, sample + perChunk <= Int(sizes.sampleCount) else { return nil }
                var bytes: UInt64 = 0
                if sizes.constantSize != 0 {
                    bytes = UInt64(sizes.constantSize) * UInt64(perChunk)  // < 2^64.
                } else {
                    for s in sample..<(sample + perChunk) { bytes += UInt64(sizes.sizes[s]) }
                }
                let chunk = Chunk(offset: offsets[chunkIndex], byteCount: bytes, firstSample: sample,
                                  sampleCount: perChunk, sampleDescriptionIndex: runs[run].sampleDescriptionIndex)
                sample += perChunk
                chunkIndex += 1
                return chunk
            }
            return nil
        }
    }
}

extension SampleTable {
    /// Where the presentation of the media ends, in media ticks: ``totalDuration`` plus the
    /// largest positive composition offset (`ctts`, B-frames), saturating at 2^64 − 1; what
    /// ``SampleIndex/presentationEnd`` says for a table starting at decode time 0. O(`ctts`
    /// entries).
    public var presentationEnd: UInt64 {
        let largest = boxes.compositionOffsets?.entries.lazy.filter { $0.sampleCount > 0 }.map(\.offset).max() ?? 0
        let (end, overflow) = totalDuration.addingReportingOverflow(UInt64(Swift.max(0, largest)))
        return overflow ? UInt64.max : end
    }

    /// The samples of a file cut short that lie wholly inside it: `boxes`' samples in
    /// decoding order, up to the first that ends past `fileLength` (the one rule of both
    /// extraction's salvage and ``MovieReader/wholeSamples(of:)``, through
    /// ``MovieReader/wholeSampleTable(of:)``). Durations, composition
    /// offsets, sync marks, sample descriptions and `roll` groups are kept for those samples.
    ///
    /// The tables are first checked as a whole (``init(boxes:fileLength:excluding:)``) with no
    /// file end, then the kept part against the file. Costs O(samples kept + table entries).
    ///
    /// - Throws: what ``init(boxes:fileLength:excluding:)`` throws for tables that contradict
    ///   one another or overlap `excluded`: a cut file is no excuse for those.
    public init(wholeSamplesOf boxes: SampleTableBoxes, fileLength: UInt64,
                excluding excluded: [Range<UInt64>] = []) throws {
        let whole = try SampleTable(boxes: boxes, fileLength: UInt64.max, excluding: excluded)
        var builder = SampleTableBuilder()
        // The tables are walked alongside the samples (which come in order) rather than
        // expanded: the whole table may claim 2^30 samples, most of them past the cut.
        var timing = boxes.timeToSample.entries.makeIterator()
        var duration: UInt32 = 0
        var leftInTiming: UInt32 = 0
        var offsets = (boxes.compositionOffsets?.entries ?? []).makeIterator()
        var compositionOffset: Int64 = 0
        var leftInOffsets: UInt32 = 0
        // stss lists 1-based sample numbers; sorted here so one cursor walks them.
        let syncNumbers = boxes.syncSamples?.sampleNumbers.sorted()
        var nextSync = 0
        // Bytes kept so far: overlapping chunks could otherwise repeat the file's bytes 2^30 times.
        var kept: UInt64 = 0
        let sizes = boxes.sampleSizes
        try whole.forEachChunk { chunk in
            var samples: [SampleTableBuilder.Sample] = []
            var end = chunk.offset
            for i in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = sizes.size(ofSample: i)
                end += UInt64(size)  // Inside the validated (64-bit) chunk.
                kept += UInt64(size)  // At most fileLength + 2^32 (checked below before growing).
                guard end <= fileLength, kept <= fileLength else { break }
                while leftInTiming == 0, let entry = timing.next() {
                    (duration, leftInTiming) = (entry.sampleDelta, entry.sampleCount)
                }
                leftInTiming -= min(leftInTiming, 1)  // stts counts every sample: validated above.
                while leftInOffsets == 0, let entry = offsets.next() {
                    (compositionOffset, leftInOffsets) = (entry.offset, entry.sampleCount)
                }
                leftInOffsets -= min(leftInOffsets, 1)  // ctts counts every sample: validated above.
                var isSync = true
                if let syncNumbers {
                    // Sample numbers are 1-based and at most the sample count (validated above).
                    while nextSync < syncNumbers.count, Int(syncNumbers[nextSync]) <= i { nextSync += 1 }
                    isSync = nextSync < syncNumbers.count && Int(syncNumbers[nextSync]) == i + 1
                }
                samples.append(.init(size: size, duration: duration, compositionOffset: compositionOffset,
                                     isSync: isSync))
            }
            try builder.appendChunk(offset: chunk.offset, sampleDescriptionIndex: chunk.sampleDescriptionIndex,
                                    samples: samples)
            return end <= fileLength && kept <= fileLength
        }
        let prefix = builder.boxes(descriptions: boxes.sampleDescriptions,
                                   groups: boxes.sampleGroupDescriptions.filter { $0.groupingType == .roll })
        try self.init(boxes: prefix, fileLength: fileLength, excluding: excluded)
    }
}
