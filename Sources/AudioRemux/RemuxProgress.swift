import ISOBMFF

/// How far a job has got: the one progress report of every recipe — extraction
/// (``AudioExtractor``), cut/remux (``Remux``), mux (``BackgroundMusic``), concat
/// (``Concatenation``) and packaging (``Packager``) — reported as the sample bytes are copied,
/// with counts that only grow and end at the totals.
///
/// Named `RemuxProgress`, as the error is ``RemuxError``, so that it does not clash with
/// Foundation's `Progress` in a program that imports both.
public struct RemuxProgress: Sendable, Equatable {
    /// Sample bytes copied so far.
    public var bytesDone: UInt64
    /// The sample bytes to copy in all: where ``bytesDone`` ends.
    public var bytesTotal: UInt64
    /// Samples whose bytes are all copied so far, where the recipe counts them (extraction);
    /// nil where it counts bytes only (remux, mux, concat, package).
    public var samplesDone: Int?
    /// The samples to copy in all, where the recipe counts them: where ``samplesDone`` ends.
    public var samplesTotal: Int?

    /// A progress report, for tests and for callers that relay progress of their own.
    public init(bytesDone: UInt64, bytesTotal: UInt64, samplesDone: Int? = nil, samplesTotal: Int? = nil) {
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.samplesDone = samplesDone
        self.samplesTotal = samplesTotal
    }

    /// The share done, from 0 to 1 (1 when there is nothing to copy).
    public var fractionCompleted: Double {
        bytesTotal == 0 ? 1 : Double(min(bytesDone, bytesTotal)) / Double(bytesTotal)
    }

    /// The report of ISOBMFF's writer (`MuxProgress`) as a recipe's: its sample bytes.
    init(_ progress: MuxProgress) {
        self.init(bytesDone: progress.sampleBytesDone, bytesTotal: progress.sampleBytesTotal)
    }
}

extension MovieWriter {
    /// Writes the movie into `sink` in the progressive layout, reporting each step as a
    /// recipe's progress and stopping when `isCancelled` says so: the one way mux and concat
    /// write their output. Returns the file's size.
    func writeProgressive(into sink: inout some MovieSink, progress: ((RemuxProgress) -> Void)?,
                          isCancelled: () -> Bool) throws(RemuxError) -> UInt64 {
        var size: UInt64 = 0
        do {
            try finish(.progressive, into: &sink, progress: { state in
                size = state.bytesDone
                progress?(RemuxProgress(state))
            }, isCancelled: isCancelled)
        } catch {
            throw RemuxError(bridging: error)
        }
        return size
    }
}
