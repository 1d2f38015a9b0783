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
/// Memory is O(segments): the samples are walked in decode order through
/// ``SampleWalk/samples(from:)`` (a ``SampleIndex`` iterator for a movie's tracks, see
/// ``IndexedTrack``), each track once plus the leader's last two segments once more;
/// nothing is kept per sample.
public enum SegmentPlanner {
    /// A track's samples as the planner walks them: in decode order, from any sample.
    public protocol SampleWalk {
        /// The walk's iterator type.
        associatedtype Walk: IteratorProtocol where Walk.Element == Sample
        /// The media timescale.
        var timescale: UInt32 { get }
        /// The media time presented at 0: the first edit's media time minus a leading empty
        /// edit (in media ticks); 0 without edits.
        var origin: Int64 { get }
        /// Where the last sample's decode duration ends.
        var endTime: UInt64 { get }
        /// The number of samples; 0 also for a track the planner cannot use.
        var sampleCount: Int { get }
        /// The samples from number `first` (0-based) on, in decode order; only their decode
        /// time, sync flag and composition offset are read.
        func samples(from first: Int) -> Walk
    }

    /// A movie's track as the planner walks it: its ``SampleIndex``, read in decode order
    /// (O(1) a sample, nothing held per sample).
    public struct IndexedTrack: SampleWalk, Sendable {
        /// The track's samples.
        public var index: SampleIndex
        public var timescale: UInt32
        public var origin: Int64
        public var endTime: UInt64
        public var sampleCount: Int { index.count }

        /// A track from its samples; `endTime` is where the last sample's duration ends.
        public init(index: SampleIndex, timescale: UInt32, origin: Int64, endTime: UInt64) {
            self.index = index
            self.timescale = timescale
            self.origin = origin
            self.endTime = endTime
        }

        public func samples(from first: Int) -> SampleIndex.Iterator {
            index.makeIterator(from: first)
        }
    }

    /// One track given as arrays, one entry a sample (tests, hand-made plans).
    public struct Track: SampleWalk, Sendable, Equatable {
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

        /// The number of decode times, or 0 when the other arrays do not match them.
        public var sampleCount: Int {
            guard isSync.count == decodeTimes.count,
                  compositionOffsets.isEmpty || compositionOffsets.count == decodeTimes.count else { return 0 }
            return decodeTimes.count
        }

        /// The samples from `first` on (offsets, sizes and durations 0).
        public func samples(from first: Int) -> AnyIterator<Sample> {
            var position = max(0, first)
            let count = sampleCount
            return AnyIterator { [self] in
                guard position < count else { return nil }
                defer { position += 1 }
                return Sample(offset: 0, size: 0, decodeTime: decodeTimes[position],
                              compositionOffset: compositionOffsets.isEmpty ? 0 : compositionOffsets[position],
                              duration: 0, isSync: isSync[position])
            }
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

    /// A segment's first sample and its presentation time (ticks of its track); the time of
    /// a track's first sample is nil when it does not fit 64 bits, and thrown only if read
    /// (as before the plan walked its samples: a time never compared never fails a plan).
    struct Cut {
        var sample: Int
        var time: Int64?

        func presented() throws(Failure) -> Int64 {
            guard let time else { throw .timeOutOfRange }
            return time
        }
    }

    /// Per track, its segments as ranges of sample numbers (0-based, in decode order),
    /// covering every sample once; `leader` is the track the others follow.
    ///
    /// - Parameters:
    ///   - tracks: the tracks, each with at least one sample.
    ///   - segmentDuration: the wanted duration, above 0.
    ///   - leader: the track whose sync samples decide the cuts (the first video track).
    public static func plan<T: SampleWalk>(_ tracks: [T], segmentDuration: MediaTime, leader: Int) throws(Failure)
        -> [[Range<Int>]] {
        guard tracks.indices.contains(leader), segmentDuration.ticks > 0 else { throw .timeOutOfRange }
        for (index, track) in tracks.enumerated() {
            guard track.sampleCount > 0 else { throw .emptyTrack(index) }
            guard track.timescale > 0 else { throw .timeOutOfRange }
        }
        let lead = tracks[leader]
        var walk = lead.samples(from: 0)
        guard let first = walk.next(), first.isSync else { throw .noSyncSample(leader) }
        guard let step = segmentDuration.rescaled(to: lead.timescale, rounding: .nearest)?.ticks, step > 0 else {
            throw .timeOutOfRange
        }
        var cuts = [Cut(sample: 0, time: try? presented(lead, first))]
        var next = step
        var number = 0
        while let sample = walk.next() {
            number += 1
            guard number < lead.sampleCount else { break }
            guard sample.isSync else { continue }
            let time = try presented(lead, sample)
            guard time >= next else { continue }
            cuts.append(Cut(sample: number, time: time))
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
            longest = max(longest, try span(from: try start.presented(), to: try end.presented()))
        }
        let timescale = Int64(lead.timescale)
        let targetSeconds = longest / timescale + (longest % timescale >= timescale - timescale / 2 ? 1 : 0)
        let (targetTicks, overflow) = targetSeconds.multipliedReportingOverflow(by: timescale)
        let shortest = MediaTime(ticks: overflow ? step : max(step, targetTicks), timescale: lead.timescale)
        guard let shortest, let half = MediaTime(ticks: shortest.ticks - shortest.ticks / 2,
                                                 timescale: lead.timescale) else { throw .timeOutOfRange }
        cuts = try balancingTail(cuts, of: lead, minimum: half.ticks, balance: true)
        var plans: [[Range<Int>]] = Array(repeating: [], count: tracks.count)
        plans[leader] = ranges(cuts, count: lead.sampleCount)
        var boundaries: [MediaTime?] = []
        for cut in cuts.dropFirst() { boundaries.append(MediaTime(ticks: try cut.presented(), timescale: lead.timescale)) }
        for (index, track) in tracks.enumerated() where index != leader {
            plans[index] = try following(track, boundaries: boundaries, half: half)
        }
        return plans
    }

    /// The segments of a track that follows the leader's `boundaries`: cut at its first sync
    /// sample presented at or after each, its tail joined when shorter than `half`.
    static func following<T: SampleWalk>(_ track: T, boundaries: [MediaTime?], half: MediaTime) throws(Failure)
        -> [Range<Int>] {
        let count = track.sampleCount
        var cuts = [Cut(sample: 0, time: nil)]  // Its time is never read: a follower is not balanced.
        var walk = track.samples(from: 1)
        var number = 1
        var current = count > 1 ? walk.next() : nil
        for boundary in boundaries {
            guard let boundary else { throw .timeOutOfRange }
            var found: Int64?
            while let sample = current {
                if sample.isSync {
                    let ticks = try presented(track, sample)
                    if let time = MediaTime(ticks: ticks, timescale: track.timescale), !(time < boundary) {
                        found = ticks
                        break
                    }
                }
                number += 1
                current = number < count ? walk.next() : nil
            }
            guard let found else { break }
            if number > cuts[cuts.count - 1].sample { cuts.append(Cut(sample: number, time: found)) }
        }
        guard let minimum = half.rescaled(to: track.timescale, rounding: .up)?.ticks else {
            throw .timeOutOfRange
        }
        cuts = try balancingTail(cuts, of: track, minimum: minimum, balance: false)
        return ranges(cuts, count: count)
    }

    /// The presentation time of `sample` of `track`: its decode time plus its composition
    /// offset, minus the track's origin.
    static func presented<T: SampleWalk>(_ track: T, _ sample: Sample) throws(Failure) -> Int64 {
        let time = try presented(track, decodeTime: sample.decodeTime)
        let (sum, overflow) = time.addingReportingOverflow(sample.compositionOffset)
        guard !overflow else { throw .timeOutOfRange }
        return sum
    }

    static func presented<T: SampleWalk>(_ track: T, decodeTime: UInt64) throws(Failure) -> Int64 {
        guard let time = Int64(exactly: decodeTime) else { throw .timeOutOfRange }
        let (difference, overflow) = time.subtractingReportingOverflow(track.origin)
        guard !overflow else { throw .timeOutOfRange }
        return difference
    }

    /// `cuts` with a last segment shorter than `minimum` ticks balanced with the one before
    /// (when `balance` and a sync sample between them leaves both at least `minimum` long: the
    /// one making them closest in length) or joined to it. Walks the last two segments again.
    static func balancingTail<T: SampleWalk>(_ cuts: [Cut], of track: T, minimum: Int64, balance: Bool)
        throws(Failure) -> [Cut] {
        guard cuts.count >= 2 else { return cuts }
        var cuts = cuts
        let last = cuts[cuts.count - 1]
        let previous = cuts[cuts.count - 2]
        let end = try presented(track, decodeTime: track.endTime)
        let tail = try span(from: try last.presented(), to: end)
        guard tail < minimum else { return cuts }
        cuts.removeLast()
        guard balance else { return cuts }
        let start = try previous.presented()
        var best: (cut: Cut, imbalance: Int64)?
        var walk = track.samples(from: previous.sample + 1)
        var number = previous.sample
        while let sample = walk.next() {
            number += 1
            guard number < track.sampleCount else { break }
            guard sample.isSync else { continue }
            let time = try presented(track, sample)
            let (first, second) = (try span(from: start, to: time), try span(from: time, to: end))
            guard first >= minimum, second >= minimum else { continue }
            let imbalance = abs(first - second)
            if best.map({ imbalance < $0.imbalance }) ?? true { best = (Cut(sample: number, time: time), imbalance) }
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

    static func ranges(_ cuts: [Cut], count: Int) -> [Range<Int>] {
        zip(cuts, cuts.dropFirst()).map { $0.sample..<$1.sample } + [cuts[cuts.count - 1].sample..<count]
    }
}
