/// A regular track's samples walked in decode order from its tables in the file, read in
/// windows of ``windowBytes`` (ISO/IEC 14496-12 § 8.6.1 `stts`/`ctts`, § 8.7.3 `stsz`,
/// § 8.7.4 `stsc`, § 8.7.5 `stco`/`co64`, § 8.6.2 `stss`): memory independent of the track's
/// length, where ``SampleIndex`` holds its tables (a 2-hour track's `stsz` and `stco` take
/// megabytes).
///
/// ``init(track:tables:movieBoxRange:fileLength:source:)`` checks the tables as a whole in
/// one pass of each: every check of ``SampleTable/init(boxes:fileLength:excluding:)`` and of
/// ``SampleIndex/init(table:firstDecodeTime:)`` (counts that agree, `stsc` in order, chunks
/// inside the file, outside `moov` and not holding more bytes than the file, `stss` in
/// increasing order, durations below 2^64). It is stricter than they are where a table is
/// unusual (an `stss` counting from 0 or empty, `stz2`, `stps`, a table listed twice,
/// `sgpd`/`sbgp` over 1 MiB): it throws, and the caller reads the track the regular way,
/// which reports or tolerates the fault as every other command does. Holds no source:
/// ``Cursor/next(from:)`` is given one.
public struct WindowedSamples: Sendable {
    /// The bytes read at a time from one table.
    public static let windowBytes = 1 << 16

    /// The number of samples.
    public let count: Int
    /// The sum of the sample durations, in the media timescale.
    public let totalDuration: UInt64
    /// The total size of the samples in bytes.
    public private(set) var sampleBytes: UInt64 = 0
    /// The least and greatest composition offsets, as ``SampleIndex/compositionOffsetRange``.
    public let compositionOffsetRange: ClosedRange<Int64>
    /// Whether the first sample is a sync sample.
    public let startsWithSync: Bool
    /// Where the presentation of the media ends (``SampleIndex/presentationEnd``).
    public var presentationEnd: UInt64 {
        let (end, overflow) = totalDuration.addingReportingOverflow(UInt64(max(0, compositionOffsetRange.upperBound)))
        return overflow ? UInt64.max : end
    }

    let timing: TableWindow
    let offsets: TableWindow?
    let chunkRuns: TableWindow
    let chunkOffsets: TableWindow
    /// The sizes, or nil when every sample has ``constantSize``.
    let sizes: TableWindow?
    let constantSize: UInt32
    let syncSamples: TableWindow?

    /// Checks the tables of `track` found by ``MovieOutline`` (`tables`), reading each once.
    ///
    /// - Throws: `.invalidSampleTable` (or what `source` throws) when the tables are broken
    ///   or unusual; see the type.
    public init(track: Track, tables: SampleTableLocations, movieBoxRange: Range<UInt64>, fileLength: UInt64,
                source: some ByteSource) throws {
        func fail(_ message: String) -> ISOBMFFError {
            ISOBMFFError(.invalidSampleTable, message, path: track.path, offset: nil)
        }
        var found: [FourCC: SampleTableLocations.Box] = [:]
        var groups: [SampleTableLocations.Box] = []
        for box in tables.boxes {
            if box.type == .sbgp || box.type == .sgpd { groups.append(box); continue }
            guard found.updateValue(box, forKey: box.type) == nil else { throw fail("\(box.type) twice") }
        }
        guard found[.stco] == nil || found[.co64] == nil else { throw fail("stco and co64") }
        guard let stts = found[.stts], let stsc = found[.stsc], let stsz = found[.stsz],
              let chunks = found[.stco] ?? found[.co64] else { throw fail("a table is missing") }
        let descriptionCount = track.sampleDescriptions.entries.count
        guard track.problem == nil, descriptionCount > 0 else { throw fail("no sample description") }

        // The boxes' headers, as their parsers read them.
        func table(_ box: SampleTableLocations.Box, header: Int, entrySize: Int) throws -> TableWindow {
            let size = box.payload.upperBound - box.payload.lowerBound
            guard size >= UInt64(header) else { throw fail("\(box.type) too short") }
            let fields = try source.bytes(at: box.payload.lowerBound, count: header)
            let count = TableWindow.uint32(fields, at: header - 4)
            let (needed, overflow) = UInt64(count).multipliedReportingOverflow(by: UInt64(entrySize))
            guard !overflow, needed <= size - UInt64(header), let entries = Int(exactly: count) else {
                throw fail("\(box.type) count exceeds the box")
            }
            return TableWindow(start: box.payload.lowerBound + UInt64(header), count: entries, entrySize: entrySize)
        }
        timing = try table(stts, header: 8, entrySize: 8)
        chunkRuns = try table(stsc, header: 8, entrySize: 12)
        chunkOffsets = try table(chunks, header: 8, entrySize: chunks.type == .co64 ? 8 : 4)
        if let ctts = found[.ctts] {
            guard !ctts.payload.isEmpty,
                  try source.bytes(at: ctts.payload.lowerBound, count: 1)[0] <= 1 else { throw fail("ctts version") }
            offsets = try table(ctts, header: 8, entrySize: 8)
        } else {
            offsets = nil
        }
        syncSamples = try found[.stss].map { try table($0, header: 8, entrySize: 4) }
        guard stsz.payload.upperBound - stsz.payload.lowerBound >= 12 else { throw fail("stsz too short") }
        let sizeFields = try source.bytes(at: stsz.payload.lowerBound, count: 12)
        constantSize = TableWindow.uint32(sizeFields, at: 4)
        let sizeCount: UInt32
        if constantSize != 0 {
            sizeCount = TableWindow.uint32(sizeFields, at: 8)
            sizes = nil
        } else {
            let window = try table(stsz, header: 12, entrySize: 4)
            sizeCount = UInt32(window.count)  // Read from 32 bits.
            sizes = window
        }

        // stsc: first chunks start at 1, increase, and name existing chunks and entries.
        let chunkCount = UInt64(chunkOffsets.count)
        var runs = chunkRuns
        var samplesFromChunks: UInt64 = 0
        var previous: UInt64 = 0
        for i in 0..<runs.count {
            let first = UInt64(try runs.uint32(i, 0, from: source))
            let perChunk = UInt64(try runs.uint32(i, 4, from: source))
            let description = try runs.uint32(i, 8, from: source)
            guard i > 0 || first == 1, first > previous, first <= chunkCount, description >= 1,
                  description <= descriptionCount else { throw fail("stsc entry \(i + 1)") }
            let next = i + 1 < runs.count ? UInt64(try runs.uint32(i + 1, 0, from: source)) : chunkCount + 1
            guard next > first else { throw fail("stsc entry \(i + 2)") }
            let (product, productOverflow) = (next - first).multipliedReportingOverflow(by: perChunk)
            let (sum, sumOverflow) = samplesFromChunks.addingReportingOverflow(product)
            guard !productOverflow, !sumOverflow, sum <= UInt64(Limits.maximumSampleCount) else {
                throw fail("stsc holds too many samples")
            }
            samplesFromChunks = sum
            previous = first
        }
        guard runs.count > 0 || chunkCount == 0 else { throw fail("stsc empty") }

        // The tables describe the same samples.
        guard UInt64(sizeCount) == samplesFromChunks else { throw fail("stsz count") }
        var times = timing
        var timed: UInt64 = 0
        var duration: UInt64 = 0
        for i in 0..<times.count {
            let samples = UInt64(try times.uint32(i, 0, from: source))
            let delta = UInt64(try times.uint32(i, 4, from: source))
            timed += samples  // At most 2^32 entries of 2^32 − 1: below 2^64.
            let (product, overflowed) = samples.multipliedReportingOverflow(by: delta)
            let (sum, overflow) = duration.addingReportingOverflow(product)
            guard !overflowed, !overflow else { throw fail("stts durations pass 2^64") }
            duration = sum
        }
        guard timed == samplesFromChunks else { throw fail("stts count") }
        var low = Int64.max
        var high = Int64.min
        if var table = offsets {
            var covered: UInt64 = 0
            for i in 0..<table.count {
                let samples = try table.uint32(i, 0, from: source)
                covered += UInt64(samples)  // Below 2^64, as above.
                guard samples > 0 else { continue }
                let offset = CompositionOffsetBox.offset(coded: try table.uint32(i, 4, from: source))
                (low, high) = (min(low, offset), max(high, offset))
            }
            guard covered == timed else { throw fail("ctts count") }
        }
        compositionOffsetRange = low <= high ? low...high : 0...0
        if var table = syncSamples {
            guard table.count > 0 else { throw fail("stss empty") }
            var last: UInt32 = 0
            for i in 0..<table.count {
                let number = try table.uint32(i, 0, from: source)
                // Strictly increasing from above 0 (a first entry of 0 is read one higher by
                // SyncSampleBox.asPlayersRead: the regular way).
                guard number > last, UInt64(number) <= timed else { throw fail("stss entry \(i + 1)") }
                last = number
            }
            startsWithSync = try table.uint32(0, 0, from: source) == 1
        } else {
            startsWithSync = true
        }
        for box in groups {
            let size = box.payload.upperBound - box.payload.lowerBound
            guard size <= 1 << 20 else { throw fail("\(box.type) over 1 MiB") }
            var reader = ByteReader(try source.bytes(at: box.payload.lowerBound, count: Int(size)),
                                    fileOffset: box.payload.lowerBound, path: box.path)
            if box.type == .sgpd {
                _ = try SampleGroupDescriptionBox(parsing: &reader)
            } else {
                let sbgp = try SampleToGroupBox(parsing: &reader)
                let grouped = sbgp.entries.reduce(UInt64(0)) { $0 + UInt64($1.sampleCount) }  // Below 2^64.
                guard grouped <= timed else { throw fail("sbgp groups too many samples") }
            }
        }
        count = Int(samplesFromChunks)  // At most maximumSampleCount.
        totalDuration = duration

        // Every chunk lies inside the file, outside moov, and the chunks hold no more bytes
        // than the file (else they overlap).
        var cursor = Cursor(self)
        var total: UInt64 = 0
        try cursor.forEachChunk(from: source) { offset, bytes in
            let (end, overflow) = offset.addingReportingOverflow(bytes)
            guard !overflow, end <= fileLength else { throw fail("chunk at byte \(offset) ends past the file") }
            guard bytes == 0 || !movieBoxRange.overlaps(offset..<end) else { throw fail("chunk overlaps moov") }
            let (sum, overflowed) = total.addingReportingOverflow(bytes)
            guard !overflowed, sum <= fileLength else { throw fail("the chunks overlap") }
            total = sum
        }
        sampleBytes = total
    }

    /// A cursor at the first sample.
    public func makeCursor() -> Cursor {
        Cursor(self)
    }

    /// A position in the samples: what ``SampleIndex/Iterator`` is to ``SampleIndex``, with
    /// the tables read in windows from the source given to ``next(from:)``. Every value read
    /// is checked again (the file may change after the tables were checked): a cursor throws,
    /// never traps.
    public struct Cursor: Sendable {
        let samples: WindowedSamples
        /// The number of the next sample (0-based).
        public private(set) var position = 0
        var timing: TableWindow
        var timingEntry = 0
        var timeLeft: UInt32 = 0
        var delta: UInt32 = 0
        var decodeTime: UInt64 = 0
        var offsets: TableWindow?
        var offsetEntry = 0
        var offsetLeft: UInt32 = 0
        var offset: Int64 = 0
        var chunkRuns: TableWindow
        var run = -1
        var runEnd = 0
        var perChunk: UInt32 = 0
        var descriptionIndex: UInt32 = 1
        var chunkOffsets: TableWindow
        var chunk = -1
        var chunkLeft: UInt32 = 0
        var byteOffset: UInt64 = 0
        var sizes: TableWindow?
        var syncSamples: TableWindow?
        var syncEntry = 0

        init(_ samples: WindowedSamples) {
            self.samples = samples
            timing = samples.timing
            offsets = samples.offsets
            chunkRuns = samples.chunkRuns
            chunkOffsets = samples.chunkOffsets
            sizes = samples.sizes
            syncSamples = samples.syncSamples
        }

        /// The cursor with its windows dropped, to be kept (one per segment) and resumed later:
        /// its next read loads them again.
        public func parked() -> Cursor {
            var cursor = self
            cursor.timing.drop()
            cursor.offsets?.drop()
            cursor.chunkRuns.drop()
            cursor.chunkOffsets.drop()
            cursor.sizes?.drop()
            cursor.syncSamples?.drop()
            return cursor
        }

        func fail(_ message: String) -> ISOBMFFError {
            ISOBMFFError(.invalidSampleTable, "the sample tables changed or do not hold together: \(message)",
                         path: "stbl", offset: nil)
        }

        /// Moves to the next chunk holding samples: its first byte in ``byteOffset``, its
        /// sample count in ``chunkLeft``.
        mutating func nextChunk(from source: some ByteSource) throws {
            chunk += 1
            while chunk >= runEnd || perChunk == 0 {
                run += 1
                guard run < chunkRuns.count else { throw fail("no chunk for sample \(position + 1)") }
                let first = Int(try chunkRuns.uint32(run, 0, from: source))
                perChunk = try chunkRuns.uint32(run, 4, from: source)
                descriptionIndex = try chunkRuns.uint32(run, 8, from: source)
                runEnd = chunkOffsets.count
                if run + 1 < chunkRuns.count { runEnd = Int(try chunkRuns.uint32(run + 1, 0, from: source)) - 1 }
                guard first >= 1 else { throw fail("stsc chunk 0") }
                chunk = first - 1
            }
            guard chunk < chunkOffsets.count else { throw fail("chunk \(chunk + 1) does not exist") }
            byteOffset = try chunkOffsets.offset(chunk, from: source)
            chunkLeft = perChunk
        }

        /// The size of sample `position`.
        mutating func size(from source: some ByteSource) throws -> UInt32 {
            guard sizes != nil else { return samples.constantSize }
            guard position < sizes?.count ?? 0 else { throw fail("no size for sample \(position + 1)") }
            return try sizes?.uint32(position, 0, from: source) ?? 0
        }

        /// Calls `body` with each chunk's offset and byte count, in order (empty chunks
        /// included, as ``SampleTable/forEachChunk(_:)`` gives them).
        mutating func forEachChunk(from source: some ByteSource, _ body: (UInt64, UInt64) throws -> Void) throws {
            for r in 0..<chunkRuns.count {
                let first = Int(try chunkRuns.uint32(r, 0, from: source)) - 1
                let count = try chunkRuns.uint32(r, 4, from: source)
                var end = chunkOffsets.count
                if r + 1 < chunkRuns.count { end = Int(try chunkRuns.uint32(r + 1, 0, from: source)) - 1 }
                guard first >= 0, first <= end, end <= chunkOffsets.count else { throw fail("stsc") }
                for c in first..<end {
                    let offset = try chunkOffsets.offset(c, from: source)
                    var bytes: UInt64 = 0
                    for _ in 0..<count {
                        let (sum, overflow) = bytes.addingReportingOverflow(UInt64(try size(from: source)))
                        guard !overflow else { throw fail("chunk size") }
                        bytes = sum
                        position += 1
                    }
                    try body(offset, bytes)
                }
            }
        }

        /// The next sample in decode order, or nil after the last.
        ///
        /// - Throws: what `source` throws, or `.invalidSampleTable` when the tables read now
        ///   do not hold together (the file changed since they were checked).
        public mutating func next(from source: some ByteSource) throws -> Sample? {
            guard position < samples.count else { return nil }
            while timeLeft == 0 {
                guard timingEntry < timing.count else { throw fail("no duration for sample \(position + 1)") }
                timeLeft = try timing.uint32(timingEntry, 0, from: source)
                delta = try timing.uint32(timingEntry, 4, from: source)
                timingEntry += 1
            }
            if offsets != nil {
                while offsetLeft == 0 {
                    guard offsetEntry < offsets?.count ?? 0 else { throw fail("no offset for sample \(position + 1)") }
                    offsetLeft = try offsets?.uint32(offsetEntry, 0, from: source) ?? 0
                    offset = CompositionOffsetBox.offset(coded: try offsets?.uint32(offsetEntry, 4, from: source) ?? 0)
                    offsetEntry += 1
                }
                offsetLeft -= 1
            }
            if chunkLeft == 0 { try nextChunk(from: source) }
            let size = try size(from: source)
            var isSync = true
            if syncSamples != nil {
                var number: UInt32 = 0
                if syncEntry < syncSamples?.count ?? 0 {
                    number = try syncSamples?.uint32(syncEntry, 0, from: source) ?? 0
                }
                isSync = UInt64(number) == UInt64(position) + 1
                if isSync { syncEntry += 1 }
            }
            let sample = Sample(offset: byteOffset, size: size, decodeTime: decodeTime, compositionOffset: offset,
                                duration: delta, isSync: isSync, descriptionIndex: descriptionIndex)
            let (nextOffset, o1) = byteOffset.addingReportingOverflow(UInt64(size))
            let (nextTime, o2) = decodeTime.addingReportingOverflow(UInt64(delta))
            guard !o1, !o2 else { throw fail("sample \(position + 1) ends past 2^64") }
            (byteOffset, decodeTime) = (nextOffset, nextTime)
            timeLeft -= 1
            chunkLeft -= 1
            position += 1
            return sample
        }
    }
}

/// One table's entries, read from the file a window at a time.
struct TableWindow: Sendable {
    /// The file offset of entry 0.
    let start: UInt64
    /// The number of entries (checked against the box's size).
    let count: Int
    let entrySize: Int
    /// The entries `first ..< end` (`end` is `first + window.count / entrySize`, kept so that
    /// a read costs no division).
    var first = 0
    var end = 0
    var window: [UInt8] = []

    init(start: UInt64, count: Int, entrySize: Int) {
        self.start = start
        self.count = count
        self.entrySize = entrySize
    }

    mutating func drop() {
        first = 0
        end = 0
        window = []
    }

    /// The index in ``window`` of entry `i`, reading a window from it when needed.
    mutating func load(_ i: Int, from source: some ByteSource) throws -> Int {
        guard i >= 0, i < count else {
            throw ISOBMFFError(.invalidSampleTable, "entry \(i + 1) of \(count) read", path: "stbl", offset: start)
        }
        if i >= first, i < end { return (i - first) * entrySize }
        let entries = min(count - i, max(1, WindowedSamples.windowBytes / entrySize))
        // i < count and count × entrySize fits the box: these products and sums are exact.
        window = try source.bytes(at: start + UInt64(i) * UInt64(entrySize), count: entries * entrySize)
        first = i
        end = i + window.count / entrySize  // At most count: the window holds at most `entries`.
        return 0
    }

    /// The big-endian 32-bit field at byte `field` of entry `i`.
    mutating func uint32(_ i: Int, _ field: Int, from source: some ByteSource) throws -> UInt32 {
        let at = try load(i, from: source) + field
        return Self.uint32(window, at: at)
    }

    /// Entry `i` of a chunk offset table: 64-bit (`co64`, 8-byte entries) or 32-bit (`stco`).
    mutating func offset(_ i: Int, from source: some ByteSource) throws -> UInt64 {
        let at = try load(i, from: source)
        guard entrySize == 8 else { return UInt64(Self.uint32(window, at: at)) }
        return UInt64(Self.uint32(window, at: at)) << 32 | UInt64(Self.uint32(window, at: at + 4))
    }

    /// The big-endian 32-bit value at `at` of `bytes` (`at + 4 <= bytes.count`: callers read
    /// inside an entry or a header they sized).
    static func uint32(_ bytes: [UInt8], at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
