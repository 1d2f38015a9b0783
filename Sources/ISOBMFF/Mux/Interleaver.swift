/// Orders the chunks of several tracks by decode time: the one interleaver of the package.
///
/// Each track's samples are cut into chunks of about ``MovieWriter/chunkSeconds`` of decode
/// time (or ``MovieWriter/chunkBytes``), and the chunks of all tracks come out ordered by
/// their first sample's decode time, through a binary heap keyed by that time: work is
/// O(samples · log tracks), whatever the durations claim — a sample lasting 10^8 seconds
/// is one step, not 2·10^8 half-second steps.
///
/// Chunks that start at the same decode time go by their track's data rate, lowest first
/// (a track whose samples last 0 ticks last; equal rates by track index). Players that
/// probe the start of a file meet every track there: FFmpeg's stream probe stops after
/// about 20 video frames, and a track it has not met by then gets its last packet's
/// duration from the file's (`fill_all_stream_timings`) — an iPhone Live Photo's timed
/// metadata (`mebx`, a few bytes a frame) behind a 0.5 s chunk of its video did.
struct Interleaver {
    /// One chunk: consecutive samples of one track, stored together in `mdat`.
    struct Chunk: Equatable {
        var track: Int
        var sampleCount: Int
        var byteCount: UInt64
        var descriptionIndex: UInt32
    }

    private var cursors: [SampleTableWriter.Cursor]
    private let spans: [UInt64]
    private let timescales: [UInt32]
    private let maximumBytes: UInt64
    /// Each track's place among chunks starting together: by data rate, lowest first.
    private let rank: [Int]
    /// Tracks with samples left, as a binary heap ordered by their next sample's decode time.
    private var heap: [Int] = []
    /// The work done: one step per sample taken and per heap level moved through. A test
    /// bounds it by the sample count.
    private(set) var steps = 0

    init(tables: [SampleTableWriter], timescales: [UInt32], chunkSeconds: Double, chunkBytes: UInt64) {
        cursors = tables.map { $0.makeCursor() }
        self.timescales = timescales
        spans = timescales.map { ticks(chunkSeconds, timescale: $0) }
        maximumBytes = max(1, chunkBytes)
        // Bytes per second; a Double is exact enough to order rates (ties go by index).
        let rates = tables.indices.map { track -> Double in
            let table = tables[track]
            guard table.duration > 0 else { return .infinity }
            return Double(table.totalBytes) * Double(timescales[track]) / Double(table.duration)
        }
        let order = tables.indices.sorted { rates[$0] < rates[$1] || (rates[$0] == rates[$1] && $0 < $1) }
        var rank = Array(repeating: 0, count: tables.count)
        for (place, track) in order.enumerated() { rank[track] = place }
        self.rank = rank
        for track in tables.indices where tables[track].count > 0 { push(track) }
    }

    /// Whether track `a`'s next sample is decoded before track `b`'s (ties: the lower rate).
    /// Times are compared as fractions, exactly: `ta / sa < tb / sb` ⇔ `ta·sb < tb·sa`.
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let left = cursors[a].decodeTime.multipliedFullWidth(by: UInt64(timescales[b]))
        let right = cursors[b].decodeTime.multipliedFullWidth(by: UInt64(timescales[a]))
        if left.high != right.high { return left.high < right.high }
        if left.low != right.low { return left.low < right.low }
        return rank[a] < rank[b]
    }

    private mutating func push(_ track: Int) {
        heap.append(track)
        var child = heap.count - 1
        while child > 0 {
            steps += 1
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func pop() -> Int? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                steps += 1
                var best = parent
                for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count
                    && precedes(heap[child], heap[best]) {
                    best = child
                }
                guard best != parent else { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        return top
    }

    /// The next chunk in decode-time order, nil when every sample is placed.
    mutating func next() -> Chunk? {
        guard let track = pop() else { return nil }
        var chunk = Chunk(track: track, sampleCount: 0, byteCount: 0, descriptionIndex: 0)
        let start = cursors[track].decodeTime
        // A chunk ends after its time span only while another track waits to interleave with
        // it: the last track left runs on up to the byte limit. Otherwise a track of samples
        // lasting longer than the span (a video claiming hours over few bytes) took one chunk,
        // and so one entry in every per-chunk table, per sample.
        let isAlone = heap.isEmpty
        if isAlone, let taken = cursors[track].takeChunk(maximumBytes: maximumBytes) {
            steps += taken.count
            if cursors[track].peek() != nil { push(track) }
            return Chunk(track: track, sampleCount: taken.count, byteCount: taken.bytes,
                         descriptionIndex: taken.descriptionIndex)
        }
        while let entry = cursors[track].peek() {
            if chunk.sampleCount > 0 {
                guard entry.descriptionIndex == chunk.descriptionIndex,
                      chunk.byteCount + UInt64(entry.size) <= maximumBytes,
                      isAlone || cursors[track].decodeTime - start < spans[track] else { break }
            }
            chunk.descriptionIndex = entry.descriptionIndex
            chunk.byteCount += UInt64(entry.size)
            chunk.sampleCount += 1
            _ = cursors[track].next()
            steps += 1
        }
        if cursors[track].peek() != nil { push(track) }
        return chunk
    }
}

/// `seconds` in ticks of `timescale`, rounded to nearest, at least 1 (so that every chunk or
/// fragment takes a sample) and at most 2^62 (NaN and infinities included: seconds are a
/// caller's choice).
func ticks(_ seconds: Double, timescale: UInt32) -> UInt64 {
    let ticks = MediaTime(clampingSeconds: seconds, timescale: timescale)?.ticks ?? 0
    return UInt64(min(max(ticks, 1), 1 << 62))
}
