/// Where a stream-copied movie is cut into media segments (HLS, RFC 8216 § 3; DASH,
/// ISO/IEC 23009-1 § 6.3; CMAF, ISO/IEC 23000-19 § 7.3.2): one list of sample ranges per
/// track, every segment of a video track starting on a sync sample.
///
/// The leader (the first video track, else the first track) is cut at its first sync sample
/// at or after each multiple of the segment duration, counted on the presentation timeline
/// (decode time minus the track's ``Track/origin``). Every other track is cut at its first
/// cuttable sample at or after each of the leader's cuts, so audio boundaries lie within one
/// audio frame of the video's. A last segment shorter than half the segment duration is
/// balanced with the one before (cut at the sync sample that makes the two closest in length
/// when both then last at least half the duration) or joined to it.
///
/// Times are compared exactly across timescales (``MediaTime``); the segment duration is
/// converted to ticks once. Work is O(samples); no loop is driven by a claimed duration.
public enum SegmentPlanner {
    /// One track as the planner needs it.
    public struct Track: Sendable, Equatable {
        /// The media timescale.
        public var timescale: UInt32
        /// The media time presented at 0: the first edit's media time minus a leading empty
        /// edit (in media ticks); 0 without edits.
        public var origin: Int64
        /// Each sample's decode time, in decode order.
        public var decodeTimes: [UInt64]
        /// Whether a segment may start at each sample (a sync sample).
        public var isSync: [Bool]
        /// Where the last sample's decode duration ends.
        public var endTime: UInt64
        /// Each sample's composition offset (B-frames), or empty when all are 0: a key frame
        /// decoded at 1.92 s and presented at 2 s starts the segment of 2 s.
        public var compositionOffsets: [Int64]

        /// A track from its fields; `isSync` (and `compositionOffsets`, unless empty) must have
        /// one entry per decode time.
        public init(timescale: UInt32, origin: Int64 = 0, decodeTimes: [UInt64], isSync: [Bool], endTime: UInt64,
                    compositionOffsets: [Int64] = []) {
            self.timescale = timescale
            self.origin = origin
            self.decodeTimes = decodeTimes
            self.isSync = isSync
            self.endTime = endTime
            self.compositionOffsets = compositionOffsets
        }
    }

    /// Why a plan cannot be made.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A track has no sample at all.
        case emptyTrack(Int)
        /// The leader's first sample is not a sync sample, so its first segment could not be
        /// decoded on its own (or it has none).
        case noSyncSample(Int)
        /// A time does not fit 64 bits, or a timescale or the segment duration is 0.
        case timeOutOfRange

        /// The reason in words, for an error message.
        public var description: String {
            switch self {
            case .emptyTrack(let index): "track \(index + 1) has no sample"
            case .noSyncSample(let index): "track \(index + 1) does not start with a sync sample"
            case .timeOutOfRange: "a time of the tracks does not fit 64 bits (or a timescale is 0)"
            }
        }
    }

    /// Per track, its segments as ranges of sample numbers (0-based, in decode order),
    /// covering every sample once; `leader` is the track the others follow.
    ///
    /// - Parameters:
    ///   - tracks: the tracks, each with at least one sample.
    ///   - segmentDuration: the wanted duration, above 0.
    ///   - leader: the track whose sync samples decide the cuts (the first video track).
    public static func plan(_ tracks: [Track], segmentDuration: MediaTime, leader: Int) throws(Failure)
        -> [[Range<Int>]] {
        guard tracks.indices.contains(leader), segmentDuration.ticks > 0 else { throw .timeOutOfRange }
        for (index, track) in tracks.enumerated() {
            guard !track.decodeTimes.isEmpty, track.isSync.count == track.decodeTimes.count,
                  track.compositionOffsets.isEmpty || track.compositionOffsets.count == track.decodeTimes.count else {
                throw .emptyTrack(index)
            }
            guard track.timescale > 0 else { throw .timeOutOfRange }
        }
        let lead = tracks[leader]
        guard lead.isSync[0] else { throw .noSyncSample(leader) }
        guard let step = segmentDuration.rescaled(to: lead.timescale, rounding: .nearest)?.ticks, step > 0 else {
            throw .timeOutOfRange
        }
        var cuts = [0]
        var next = step
        for index in 1..<lead.decodeTimes.count where lead.isSync[index] {
            let time = try presented(lead, index)
            guard time >= next else { continue }
            cuts.append(index)
            // The next multiple of the step after `time` (time ≥ step > 0); past Int64, no more cuts.
            let (quotient, added) = (time / step).addingReportingOverflow(1)
            let (following, overflow) = quotient.multipliedReportingOverflow(by: step)
            guard !added, !overflow else { break }
            next = following
        }
        // The shortest tail kept: half the wanted duration, or half the target duration the
        // cuts so far make (a GOP longer than the step lengthens every playlist's target).
        var longest: Int64 = 0
        for (start, end) in zip(cuts, cuts.dropFirst()) {
            longest = max(longest, try span(from: try presented(lead, start), to: try presented(lead, end)))
        }
        let timescale = Int64(lead.timescale)
        let targetSeconds = longest / timescale + (longest % timescale >= timescale - timescale / 2 ? 1 : 0)
        let (targetTicks, overflow) = targetSeconds.multipliedReportingOverflow(by: timescale)
        let shortest = MediaTime(ticks: overflow ? step : max(step, targetTicks), timescale: lead.timescale)
        guard let shortest, let half = MediaTime(ticks: shortest.ticks - shortest.ticks / 2,
                                                 timescale: lead.timescale) else { throw .timeOutOfRange }
        cuts = try balancingTail(cuts, of: lead, minimum: half.ticks, balance: true)
        var plans: [[Range<Int>]] = Array(repeating: [], count: tracks.count)
        plans[leader] = ranges(cuts, count: lead.decodeTimes.count)
        var boundaries: [MediaTime?] = []
        for cut in cuts.dropFirst() { boundaries.append(MediaTime(ticks: try presented(lead, cut), timescale: lead.timescale)) }
        for (index, track) in tracks.enumerated() where index != leader {
            var followerCuts = [0]
            var sample = 1
            for boundary in boundaries {
                guard let boundary else { throw .timeOutOfRange }
                while sample < track.decodeTimes.count {
                    if track.isSync[sample],
                       let time = MediaTime(ticks: try presented(track, sample), timescale: track.timescale),
                       !(time < boundary) {
                        break
                    }
                    sample += 1
                }
                guard sample < track.decodeTimes.count else { break }
                if sample > followerCuts[followerCuts.count - 1] { followerCuts.append(sample) }
            }
            guard let minimum = half.rescaled(to: track.timescale, rounding: .up)?.ticks else {
                throw .timeOutOfRange
            }
            followerCuts = try balancingTail(followerCuts, of: track, minimum: minimum, balance: false)
            plans[index] = ranges(followerCuts, count: track.decodeTimes.count)
        }
        return plans
    }

    /// The presentation time of sample `index`: its decode time plus its composition offset,
    /// minus the track's origin.
    static func presented(_ track: Track, _ index: Int) throws(Failure) -> Int64 {
        let time = try presented(track, decodeTime: track.decodeTimes[index])
        guard !track.compositionOffsets.isEmpty else { return time }
        let (sum, overflow) = time.addingReportingOverflow(track.compositionOffsets[index])
        guard !overflow else { throw .timeOutOfRange }
        return sum
    }

    static func presented(_ track: Track, decodeTime: UInt64) throws(Failure) -> Int64 {
        guard let time = Int64(exactly: decodeTime) else { throw .timeOutOfRange }
        let (difference, overflow) = time.subtractingReportingOverflow(track.origin)
        guard !overflow else { throw .timeOutOfRange }
        return difference
    }

    /// `cuts` with a last segment shorter than `minimum` ticks balanced with the one before
    /// (when `balance` and a sync sample between them leaves both at least `minimum` long: the
    /// one making them closest in length) or joined to it.
    static func balancingTail(_ cuts: [Int], of track: Track, minimum: Int64, balance: Bool) throws(Failure) -> [Int] {
        guard cuts.count >= 2 else { return cuts }
        var cuts = cuts
        let last = cuts[cuts.count - 1]
        let previous = cuts[cuts.count - 2]
        let end = try presented(track, decodeTime: track.endTime)
        let tail = try span(from: try presented(track, last), to: end)
        guard tail < minimum else { return cuts }
        cuts.removeLast()
        guard balance else { return cuts }
        let start = try presented(track, previous)
        var best: (cut: Int, imbalance: Int64)?
        for index in (previous + 1)..<track.decodeTimes.count where track.isSync[index] {
            let time = try presented(track, index)
            let (first, second) = (try span(from: start, to: time), try span(from: time, to: end))
            guard first >= minimum, second >= minimum else { continue }
            let imbalance = abs(first - second)
            if best.map({ imbalance < $0.imbalance }) ?? true { best = (index, imbalance) }
        }
        if let best { cuts.append(best.cut) }
        return cuts
    }

    /// `end − start`, checked: times a file claims may lie far apart.
    static func span(from start: Int64, to end: Int64) throws(Failure) -> Int64 {
        let (difference, overflow) = end.subtractingReportingOverflow(start)
        guard !overflow else { throw .timeOutOfRange }
        return difference
    }

    static func ranges(_ cuts: [Int], count: Int) -> [Range<Int>] {
        zip(cuts, cuts.dropFirst() + [count]).map { $0..<$1 }
    }
}
