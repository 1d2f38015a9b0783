import ISOBMFF

/// Which audio track to extract.
public enum TrackChoice: Sendable, Equatable {
    /// The first track whose handler is `soun`, in file order (FFmpeg's `-map 0:a:0`).
    case firstAudio
    /// The N-th audio track, 0-based (FFmpeg's `-map 0:a:N`).
    case audioIndex(Int)
    /// The track with this ID (`tkhd` track_ID), which must be audio.
    case trackID(UInt32)
}

/// How ``AudioExtractor`` extracts: which track, whether an existing destination may be
/// replaced, whether a truncated input is salvaged, and what metadata is kept.
public struct ExtractionOptions: Sendable {
    /// Which audio track to extract; by default the first in file order, the one FFmpeg's
    /// `-map 0:a:0` takes.
    public var track: TrackChoice
    /// Replace an existing destination (atomically). Off by default: an existing file is
    /// never touched.
    public var overwrite: Bool
    /// The size of the copy buffer; memory use does not grow with the file.
    public var bufferSize: Int

    /// When the input is truncated, extract the complete part instead of failing (the
    /// result's ``ExtractionResult/salvage`` says what was recovered).
    public var salvage: Bool
    /// Carry metadata over (iTunes and QuickTime items, keys metadata, cover art, track
    /// name, chapters) and add `iTunSMPB` for gapless playback. Off: only what playback needs.
    public var keepMetadata: Bool
    /// Tag changes made to the output (after ``keepMetadata`` kept or dropped the input's).
    public var tags = TagChanges()
    /// An audio cut (issue 14): only `[from, to)` of the track's presentation, copied from
    /// the input's own samples — those covering the range plus the decoder's pre-roll — with
    /// an edit list presenting exactly the range and, where the whole extraction carries
    /// one, an `iTunSMPB` item saying the same; the input's chapters are left out. Nil (the
    /// default) for the whole track. A range the track presents nothing of is a
    /// ``RemuxError/Code/invalidArgument``.
    public var range: CutRange?

    /// Options with safe defaults: the first audio track, an existing destination left alone,
    /// no salvage, metadata kept, a 1 MiB buffer. `bufferSize` is raised to at least 64 KiB.
    public init(track: TrackChoice = .firstAudio, overwrite: Bool = false, salvage: Bool = false,
                keepMetadata: Bool = true, bufferSize: Int = 1 << 20) {
        self.track = track
        self.overwrite = overwrite
        self.salvage = salvage
        self.keepMetadata = keepMetadata
        self.bufferSize = max(bufferSize, 64 << 10)
    }
}

/// What an extraction produced.
public struct ExtractionResult: Sendable, Equatable {
    /// Where the output was published; empty when extracting into a `ByteSink`.
    public var outputPath: String
    /// The input track's ID (the output's track is always ID 1).
    public var inputTrackID: UInt32
    /// The RFC 6381 codec string, such as `mp4a.40.2`.
    public var codec: String
    /// The sample rate in Hz that the codec configuration states (with SBR signalled
    /// explicitly, the output rate), not the sample entry's often-wrong field.
    public var sampleRate: Int
    /// The channel count that the codec configuration states.
    public var channelCount: Int
    /// The number of audio packets (samples) copied.
    public var sampleCount: Int
    /// The presented duration in seconds: what plays, the edit list's duration (priming
    /// and trailing padding excluded).
    public var duration: Double
    /// The size of the output file.
    public var bytesWritten: UInt64
    /// Set when a truncated input was salvaged.
    public var salvage: SalvageReport?
    /// Things the user may want to know: the track was disabled, or one of an alternate group.
    public var notes: [String] = []
    /// Things changed on the way that the user must know: something of the input dropped,
    /// repaired or ignored. Unlike ``notes`` they are not progress: the command-line tool
    /// prints them even with `--quiet`.
    public var warnings: [String] = []
    /// Audio tracks left out because their boxes are damaged: with the first audio track
    /// asked for (the default), each damaged one before the first intact one, which is
    /// extracted instead (issue 32). Each also has a line in ``warnings``.
    public var droppedTracks: [RemuxResult.DroppedTrack] = []
}

/// What was recovered from a truncated input.
public struct SalvageReport: Sendable, Equatable {
    /// Where the input ends.
    public var fileLength: UInt64
    /// The offset of the first box (fragment or `mdat`) the end of the file cuts.
    public var cutBoxOffset: UInt64
    /// The duration of the audio recovered, in seconds.
    public var recoveredSeconds: Double
}

/// Extracts an audio track from an MP4/MOV into a new M4A by stream copy: the packets are
/// copied unchanged, with their timing, and only the audio bytes of the input are read.
public enum AudioExtractor {
    /// Writes the chosen audio track of `inputPath` to a new M4A at `outputPath`.
    ///
    /// The output is written beside `outputPath` under a temporary name, flushed to disk and
    /// then moved into place atomically; on any error nothing is left behind. Throws a
    /// ``RemuxError``.
    ///
    /// - Parameters:
    ///   - inputPath: the MP4, MOV or M4A to read; it must be a regular file.
    ///   - outputPath: the M4A to create. Its directory must exist; an existing file is an error
    ///     unless `options.overwrite` is set.
    ///   - options: which track, overwriting, salvage and metadata (see ``ExtractionOptions``).
    ///   - progress: called after each piece copied, with monotonically growing counts that
    ///     end at the totals.
    ///   - isCancelled: polled between pieces; when it returns true the extraction stops,
    ///     removes its temporary file and throws ``RemuxError/Code/cancelled``.
    public static func extract(from inputPath: String, to outputPath: String,
                               options: ExtractionOptions = ExtractionOptions(),
                               progress: ((RemuxProgress) -> Void)? = nil,
                               isCancelled: @escaping () -> Bool = { false }) throws(RemuxError) -> ExtractionResult {
        try naming(inputPath) {
            try extract(from: InputFile(path: inputPath), to: outputPath, options: options, progress: progress,
                        isCancelled: isCancelled)
        }
    }

    /// Writes the chosen audio track of the open file `input` to a new M4A at `outputPath`,
    /// as ``extract(from:to:options:progress:isCancelled:)-(String,String,_,_,_)`` does; messages call the input by
    /// its ``InputFile/path``.
    public static func extract(from input: InputFile, to outputPath: String,
                               options: ExtractionOptions = ExtractionOptions(),
                               progress: ((RemuxProgress) -> Void)? = nil,
                               isCancelled: @escaping () -> Bool = { false }) throws(RemuxError) -> ExtractionResult {
        try bridged {
            if let existing = FileIdentity(path: outputPath), existing == input.identity {
                throw RemuxError(.sameFile, "\(input.path) and \(outputPath) are the same file")
            }
            try Destination.check(outputPath, overwrite: options.overwrite)
            let extraction = try naming(input.path) { try Extraction(source: input, options: options, name: input.path) }
            var output = try OutputFile(destination: outputPath, overwrite: options.overwrite)
            do {
                let size = try extraction.write(from: input, to: &output, bufferSize: options.bufferSize,
                                                progress: progress, isCancelled: isCancelled)
                guard output.position == size else {
                    throw RemuxError(.ioError, "wrote \(output.position) bytes where \(size) were planned")
                }
                try output.publish(overwrite: options.overwrite)
            } catch {
                output.discard()
                throw error
            }
            return extraction.result(outputPath: outputPath, bytesWritten: output.position)
        }
    }

    /// Extracts from any byte source into any sink (memory, an app's own storage). The
    /// caller owns the sink: on error, what was written so far is incomplete.
    public static func extract(from source: some ByteSource, to sink: inout some ByteSink,
                               options: ExtractionOptions = ExtractionOptions(),
                               progress: ((RemuxProgress) -> Void)? = nil,
                               isCancelled: @escaping () -> Bool = { false }) throws(RemuxError) -> ExtractionResult {
        try bridged {
            let extraction = try naming(source.name) { try Extraction(source: source, options: options, name: source.name) }
            let size = try extraction.write(from: source, to: &sink, bufferSize: options.bufferSize, progress: progress,
                                            isCancelled: isCancelled)
            return extraction.result(outputPath: "", bytesWritten: size)
        }
    }

    /// The `async` form of ``extract(from:to:options:progress:isCancelled:)-(String,String,_,_,_)``: it honours the
    /// calling task's cancellation, removing the temporary file, and reports progress to
    /// `progress` (called on the extracting thread).
    ///
    /// The blocking file I/O runs on a thread of its own, not on the cooperative pool.
    /// (In top-level code, such as a `main.swift`, Swift picks the synchronous form; call
    /// it from a `Task` or an `async` function.)
    public static func extract(from inputPath: String, to outputPath: String,
                               options: ExtractionOptions = ExtractionOptions(),
                               progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(RemuxError)
        -> ExtractionResult
    {
        try await onOwnThread { isCancelled throws(RemuxError) in
            try extract(from: inputPath, to: outputPath, options: options, progress: progress,
                        isCancelled: isCancelled)
        }
    }
}
