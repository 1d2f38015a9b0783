import ISOBMFF

/// Options for ``Concatenation/join(_:to:options:progress:isCancelled:)``.
public struct ConcatOptions: Sendable {
    /// One chapter per input, titled by the input's title tag (else its file name), in both
    /// chapter forms (a QuickTime chapter track, and Nero's `chpl` up to 255 chapters).
    public var chapters: Bool
    /// Replace an existing destination (atomically). Off by default: an existing file is
    /// never touched.
    public var overwrite: Bool
    /// The size of the copy buffer; memory use does not grow with the files.
    public var bufferSize: Int

    /// No chapters, an existing destination left alone, a 1 MiB buffer (at least 64 KiB).
    public init(chapters: Bool = false, overwrite: Bool = false, bufferSize: Int = 1 << 20) {
        self.chapters = chapters
        self.overwrite = overwrite
        self.bufferSize = max(bufferSize, 64 << 10)
    }
}

/// What ``Concatenation`` produced.
public struct ConcatResult: Sendable, Equatable {
    /// One input as it was placed.
    public struct Part: Sendable, Equatable {
        /// The input's path.
        public var path: String
        /// Where the part belongs, in seconds from the output's start: the presented
        /// lengths of the parts before it (for a video join, of their video).
        public var start: Double
        /// The part's own presented length, in seconds (its audio's, else its video's).
        public var duration: Double
        /// Where its first presented audio sample lands minus where it belongs, in seconds
        /// (0 for the first part and for exact codecs).
        public var startError: Double
        /// The predicted dip at the seam before it, in seconds (0 for the first part):
        /// the seam rule's model of the decoded stretch more than 20 dB under the music
        /// around it. Only a decode measures the real one.
        public var seamDip: Double
        /// Audio packets of this part left out at its seams.
        public var droppedPackets: Int
    }

    /// Whether the join has video.
    public var hasVideo: Bool
    /// Where the output was published.
    public var outputPath: String
    /// The output's presented duration in seconds.
    public var duration: Double
    /// The audio packets written (repeats are never written).
    public var audioPackets: Int
    /// The inputs in order.
    public var parts: [Part]
    /// Chapters written (0 without ``ConcatOptions/chapters``).
    public var chapterCount: Int
    /// The size of the output file.
    public var bytesWritten: UInt64
    /// What the user should know (tracks left out, the Nero chapter limit), one sentence each.
    public var warnings: [String]

    /// Audio packets left out at the seams, in all.
    public var droppedPackets: Int { parts.reduce(0) { $0 + $1.droppedPackets } }
    /// The longest predicted dip at a seam, in seconds.
    public var worstDip: Double { parts.dropFirst().map(\.seamDip).max() ?? 0 }
    /// The median predicted dip over the seams, in seconds.
    public var medianDip: Double {
        let dips = parts.dropFirst().map(\.seamDip).sorted()
        return dips.isEmpty ? 0 : dips[dips.count / 2]
    }
    /// The largest start error, in seconds (magnitude).
    public var worstStartError: Double { parts.map { abs($0.startError) }.max() ?? 0 }
}
