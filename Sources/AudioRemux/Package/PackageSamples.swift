import ISOBMFF

/// A packaged track's samples, walked in decode order by the planner and the segment writer.
///
/// A regular movie's tracks are read through ``MovieOutline`` and ``WindowedSamples``: the
/// tables stay in the file and are read in windows, so that packaging a 2-hour movie takes
/// the memory of a 1-minute one (issue 31). Fragmented movies, and every file the outline
/// or the windowed checks refuse (a damaged or unusual table, see ``WindowedSamples``), keep
/// the regular route: ``MovieReader`` and a ``SampleIndex`` in memory, which report damage
/// (refusal, or the track dropped) as every other command does.
enum PackageSamples: Sendable {
    case indexed(SampleIndex)
    case windowed(WindowedSamples)

    /// The number of samples.
    var count: Int {
        switch self {
        case .indexed(let index): index.count
        case .windowed(let samples): samples.count
        }
    }

    /// The sum of the sample durations.
    var totalDuration: UInt64 {
        switch self {
        case .indexed(let index): index.totalDuration
        case .windowed(let samples): samples.totalDuration
        }
    }

    /// Where the media's presentation ends (``SampleIndex/presentationEnd``).
    var presentationEnd: UInt64 {
        switch self {
        case .indexed(let index): index.presentationEnd
        case .windowed(let samples): samples.presentationEnd
        }
    }

    /// The decode time of the first sample (0 for a regular track).
    var firstDecodeTime: UInt64 {
        switch self {
        case .indexed(let index): index.first?.decodeTime ?? 0
        case .windowed: 0
        }
    }

    /// A cursor at sample `position`: O(log runs) in memory, O(position) through the file.
    func cursor(from position: Int, source: InputFile) throws -> PackageCursor {
        switch self {
        case .indexed(let index):
            return .indexed(index.makeIterator(from: position))
        case .windowed(let samples):
            var cursor = PackageCursor.windowed(samples.makeCursor(), source)
            for _ in 0..<max(0, position) where try cursor.next() == nil { break }
            return cursor
        }
    }
}

/// A position in a ``PackageSamples``: one of two cursors, kept as optionals rather than an
/// enum's payloads, so that ``next()`` advances the cursor in place (taking a payload out of
/// an enum and putting it back copied the windowed cursor twice a sample, a third of the
/// time of a plan; `perf`).
struct PackageCursor {
    private var indexed: SampleIndex.Iterator?
    private var windowed: WindowedSamples.Cursor?
    private let source: InputFile?

    static func indexed(_ iterator: SampleIndex.Iterator) -> PackageCursor {
        PackageCursor(indexed: iterator, windowed: nil, source: nil)
    }

    static func windowed(_ cursor: WindowedSamples.Cursor, _ source: InputFile) -> PackageCursor {
        PackageCursor(indexed: nil, windowed: cursor, source: source)
    }

    /// The next sample in decode order, or nil after the last.
    mutating func next() throws -> Sample? {
        if let source {
            // A window read replaces its array rather than writing into it: no copy is made.
            return try windowed?.next(from: source)
        }
        return indexed?.next()
    }

    /// The windowed cursor to keep for a later segment, its windows dropped; nil in memory.
    var parked: WindowedSamples.Cursor? {
        windowed?.parked()
    }
}

/// A track as ``SegmentPlanner`` walks it, from a ``PackageSamples``; a read that fails
/// ends the walk and is kept in ``failure``, thrown by ``Packager/prepare`` after the plan.
struct PlannedTrack: SegmentPlanner.SampleWalk {
    final class Failure {
        var error: (any Error)?
    }

    var samples: PackageSamples
    var source: InputFile
    var failure: Failure
    var timescale: UInt32
    var origin: Int64
    var endTime: UInt64
    var sampleCount: Int { samples.count }

    struct Walk: IteratorProtocol {
        var cursor: PackageCursor?
        let failure: Failure

        mutating func next() -> Sample? {
            do {
                return try cursor?.next()
            } catch {
                failure.error = error
                cursor = nil
                return nil
            }
        }
    }

    func samples(from first: Int) -> Walk {
        do {
            return Walk(cursor: try samples.cursor(from: first, source: source), failure: failure)
        } catch {
            failure.error = error
            return Walk(cursor: nil, failure: failure)
        }
    }
}
