import ISOBMFF

/// Audio cuts (issue 14): `extract-audio IN OUT.m4a --from T --to T` and
/// `--split-chapters`.
///
/// A cut is an extraction with ``ExtractionOptions/range`` set: the same track choice,
/// codec checks, salvage, metadata and brands, planned over the input's own samples (no
/// temporary file): the packets covering the range plus the decoder's pre-roll
/// (`PreRoll`) and an edit list presenting exactly `[from, to)`. The `iTunSMPB` item is
/// rewritten to match that edit list (priming = its media time, valid samples = the range),
/// and chapters, which would name times of the whole input, are left out of a cut.
public enum AudioCut {
    /// Extracts the chosen audio track of `input`, cut to `range`, into `outputPath`:
    /// ``AudioExtractor/extract(from:to:options:progress:isCancelled:)-(InputFile,String,_,_,_)``
    /// with `options.range` set to `range`.
    public static func extract(from input: InputFile, to outputPath: String, range: CutRange,
                               options: ExtractionOptions = ExtractionOptions()) throws(RemuxError) -> ExtractionResult {
        try bridged {
            var cut = options
            cut.range = range
            return try AudioExtractor.extract(from: input, to: outputPath, options: cut)
        }
    }

    /// One output per chapter of `input`: `directory/NN - Title.m4a` (see
    /// ``ChapterSplit/Piece/fileName``), each cut as ``extract(from:to:range:options:)``
    /// cuts and published atomically. Throws `.invalidArgument` when the input has no
    /// chapters.
    public static func splitChapters(of input: InputFile, into directory: String,
                                     options: ExtractionOptions = ExtractionOptions()) throws(RemuxError) -> [ExtractionResult] {
        try bridged {
            let split = try ChapterSplit(source: input, options: options)
            let folder = directory.hasSuffix("/") ? directory : directory + "/"
            let names = split.pieces.map { folder + $0.fileName }
            for name in names { try Destination.check(name, overwrite: options.overwrite) }
            var results: [ExtractionResult] = []
            for (piece, name) in zip(split.pieces, names) {
                var output = try OutputFile(destination: name, overwrite: options.overwrite)
                do {
                    var result = try split.write(piece, from: input, to: &output, bufferSize: options.bufferSize)
                    guard output.position == result.bytesWritten else {
                        throw RemuxError(.ioError, "wrote \(output.position) bytes where \(result.bytesWritten) were planned")
                    }
                    try output.publish(overwrite: options.overwrite)
                    result.outputPath = name
                    results.append(result)
                } catch {
                    output.discard()
                    throw error
                }
            }
            results[results.count - 1].warnings += split.warnings
            return results
        }
    }
}

/// `--split-chapters` planned over any `ByteSource`: the input's chapters (its QuickTime
/// chapter track, else Nero's `chpl`), by start, each the range from its start to the next
/// one's (the last to the audio's end), and the one extraction every piece is cut from.
/// Nothing touches a file system; ``write(_:from:to:bufferSize:isCancelled:)`` writes one
/// piece into any sink.
///
/// Chapter starts are what the file claims: one at or past the audio's end has no audio to
/// cut (a warning, not a usage error), and an end past it is the end.
public struct ChapterSplit {
    /// One chapter's cut.
    public struct Piece: Sendable, Equatable {
        /// The chapter's number among the input's chapters, from 1.
        public var chapter: Int
        /// `NN - Title.m4a` (NN from 01; a title's `/` and NUL become `-`, an empty title,
        /// `.` or `..` is `Chapter N`; at most 120 characters of the title).
        public var fileName: String
        /// What of the audio the piece holds.
        public var range: CutRange
    }

    /// The pieces, in chapter order: one per chapter that starts before the audio ends.
    public let pieces: [Piece]
    /// The chapters left out because they start at or after the audio's end, one line each.
    public let warnings: [String]
    /// The whole extraction the pieces are cut from.
    let extraction: Extraction
    let name: String

    /// Reads the chapters of `source` and plans its extraction (`options`, without its
    /// ``ExtractionOptions/range``).
    ///
    /// - Throws: ``RemuxError``: `.invalidArgument` when the input has no chapters,
    ///   `.invalidInput` when none starts before the audio ends, and what an extraction
    ///   of `source` throws.
    public init(source: some ByteSource, options: ExtractionOptions = ExtractionOptions()) throws(RemuxError) {
        do {
            let name = source.name
            let movie: Movie
            do {
                movie = try Movie(reading: source)
            } catch let error as ISOBMFFError {
                throw RemuxError(bridging: error).prefixed(name)
            }
            let chapters = Chapters.read(movie, source: source).sorted { $0.start < $1.start }
            guard !chapters.isEmpty else {
                throw RemuxError(.invalidArgument, "\(name) has no chapters to split at")
            }
            var whole = options
            whole.range = nil
            let extraction = try naming(name) { try Extraction(source: source, options: whole, name: name) }
            let seconds = extraction.output.presentedSeconds
            let length = CutTime(clampingSeconds: seconds)
            var pieces: [Piece] = []
            var past: [String] = []
            for (n, chapter) in chapters.enumerated() {
                let start = CutTime(clampingSeconds: chapter.start)
                guard start < length else {
                    past.append("chapter \(n + 1) starts at \(formatSeconds(chapter.start)) s, at or after the audio's end "
                                + "(\(formatSeconds(seconds)) s): no file for it")
                    continue
                }
                let next = n + 1 < chapters.count ? CutTime(clampingSeconds: chapters[n + 1].start) : nil
                let end = next.flatMap { $0 < length ? $0 : nil }
                if let end, end <= start { continue }
                pieces.append(Piece(chapter: n + 1, fileName: Self.fileName(n + 1, title: chapter.title),
                                    range: CutRange(from: start, to: end)))
            }
            guard !pieces.isEmpty else {
                throw RemuxError(.invalidInput, "\(name): no chapter starts before the audio ends "
                                 + "(\(formatSeconds(seconds)) s); nothing was written")
            }
            self.pieces = pieces
            self.extraction = extraction
            self.name = name
            warnings = past
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    /// Writes `piece` (one of ``pieces``), read from `source` (the one planned from), into
    /// `sink`; the result's ``ExtractionResult/outputPath`` is empty.
    public func write(_ piece: Piece, from source: some ByteSource, to sink: inout some ByteSink,
                      bufferSize: Int = 1 << 20, isCancelled: @escaping () -> Bool = { false }) throws(RemuxError)
        -> ExtractionResult {
        try bridged {
            let cut = try naming(name) { try extraction.cut(piece.range, name: name) }
            let size = try cut.write(from: source, to: &sink, bufferSize: max(bufferSize, 64 << 10), progress: nil,
                                     isCancelled: isCancelled)
            return cut.result(outputPath: "", bytesWritten: size)
        }
    }

    /// `NN - Title.m4a` for chapter `number`.
    static func fileName(_ number: Int, title: String) -> String {
        let digits = number < 10 ? "0\(number)" : "\(number)"
        var shown = title.map { $0 == "/" || $0 == "\0" ? "-" : $0 }.reduce(into: "") { $0.append($1) }
        if shown.isEmpty || shown == "." || shown == ".." { shown = "Chapter \(number)" }
        return "\(digits) - \(String(shown.prefix(120))).m4a"
    }
}
