// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - getpid: getpid(2); unlink: unlink(2). Nothing else of the C library; the import
//     preamble is the only Darwin branch.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ISOBMFF

/// Audio cuts (issue 14): `extract-audio IN OUT.m4a --from T --to T` and
/// `--split-chapters`.
///
/// The audio is extracted as usual (codec checks, salvage, metadata, brands, `iTunSMPB`)
/// into a temporary M4A beside the output, which ``Remux`` then cuts: the packets covering
/// the range plus the decoder's pre-roll (`PreRoll`) and an edit list presenting exactly
/// `[from, to)`. The `iTunSMPB` item is rewritten to match that edit list (priming = its
/// media time, valid samples = the range), and chapters, which would name times of the
/// whole input, are left out of a cut.
public enum AudioCut {
    /// Extracts the chosen audio track of `input`, cut to `range`, into `outputPath`.
    public static func extract(from input: InputFile, to outputPath: String, range: CutRange,
                               options: ExtractionOptions = ExtractionOptions()) throws -> ExtractionResult {
        if let existing = FileIdentity(path: outputPath), existing == input.identity {
            throw RemuxError(.sameFile, "\(input.path) and \(outputPath) are the same file")
        }
        try Destination.check(outputPath, overwrite: options.overwrite)
        return try naming(input.path) {
            let whole = try Intermediate(input: input, beside: outputPath, options: options)
            defer { whole.remove() }
            return try whole.cut(range, to: outputPath, name: input.path, overwrite: options.overwrite,
                                 keepMetadata: options.keepMetadata, tags: options.tags)
        }
    }

    /// One output per chapter of `input`: `directory/NN - Title.m4a` (NN from 01; a title's
    /// `/` becomes `-`, an empty title `Chapter N`), each cut as ``extract(from:to:range:options:)``
    /// cuts. Throws `.invalidArgument` when the input has no chapters.
    public static func splitChapters(of input: InputFile, into directory: String,
                                     options: ExtractionOptions = ExtractionOptions()) throws -> [ExtractionResult] {
        let movie: Movie
        do {
            movie = try Movie(reading: input)
        } catch let error as ISOBMFFError {
            throw RemuxError(error).prefixed(input.path)
        }
        let chapters = Chapters.read(movie, source: input).sorted { $0.start < $1.start }
        guard !chapters.isEmpty else {
            throw RemuxError(.invalidArgument, "\(input.path) has no chapters to split at")
        }
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        let names = chapters.enumerated().map { n, chapter in
            let number = n + 1 < 10 ? "0\(n + 1)" : "\(n + 1)"
            var title = chapter.title.map { $0 == "/" || $0 == "\0" ? "-" : $0 }.reduce(into: "") { $0.append($1) }
            if title.isEmpty || title == "." || title == ".." { title = "Chapter \(n + 1)" }
            return folder + "\(number) - \(String(title.prefix(120))).m4a"
        }
        for name in names { try Destination.check(name, overwrite: options.overwrite) }
        let whole = try Intermediate(input: input, beside: names[0], options: options)
        defer { whole.remove() }
        var results: [ExtractionResult] = []
        // Chapter starts are what the file claims: one at or past the audio's end has no
        // audio to cut (a warning, not a usage error), and an end past it is the end.
        let length = CutTime(clampingSeconds: whole.result.duration)
        var past: [String] = []
        for (n, chapter) in chapters.enumerated() {
            let start = CutTime(clampingSeconds: chapter.start)
            guard start < length else {
                past.append("chapter \(n + 1) starts at \(formatSeconds(chapter.start)) s, at or after the audio's end "
                            + "(\(formatSeconds(whole.result.duration)) s): no file for it")
                continue
            }
            let next = n + 1 < chapters.count ? CutTime(clampingSeconds: chapters[n + 1].start) : nil
            let end = next.flatMap { $0 < length ? $0 : nil }
            if let end, end <= start { continue }
            results.append(try whole.cut(CutRange(from: start, to: end), to: names[n], name: input.path,
                                         overwrite: options.overwrite, keepMetadata: options.keepMetadata,
                                         tags: options.tags))
        }
        guard !results.isEmpty else {
            throw RemuxError(.invalidInput, "\(input.path): no chapter starts before the audio ends "
                             + "(\(formatSeconds(whole.result.duration)) s); nothing was written")
        }
        results[results.count - 1].warnings += past
        return results
    }

    /// The whole extraction, in a temporary file removed on exit or signal.
    struct Intermediate {
        let path: String
        let slot: Int?
        let result: ExtractionResult

        init(input: InputFile, beside output: String, options: ExtractionOptions) throws {
            let slash = output.lastIndex(of: "/")
            let folder = slash.map { String(output[...$0]) } ?? ""
            path = folder + ".extract-audio-cut-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).m4a"
            slot = TemporaryFiles.register(path)
            var whole = options
            whole.overwrite = true
            do {
                result = try AudioExtractor.extract(from: input, to: path, options: whole)
            } catch {
                unlink(path)
                TemporaryFiles.unregister(slot)
                throw error
            }
        }

        func remove() {
            unlink(path)
            TemporaryFiles.unregister(slot)
        }

        func cut(_ range: CutRange, to output: String, name: String, overwrite: Bool,
                 keepMetadata: Bool, tags: TagChanges) throws -> ExtractionResult {
            var options = RemuxOptions(range: range)
            options.audioOnly = true
            options.overwrite = overwrite
            options.keepMetadata = keepMetadata
            options.tags = tags
            let input = try InputFile(path: path, name: name)
            let reader = try MovieReader(reading: input)
            var writer = MovieWriter()
            var done = try Remux.plan(reader, name: name, output: output, options: options, writer: &writer)
            guard let track = done.tracks.first else {
                throw RemuxError(.invalidArgument, "\(name): nothing of its audio is in the range")
            }
            // The plan left out the whole input's chapters and iTunSMPB; the cut gets its own
            // iTunSMPB where the extraction wrote one.
            if keepMetadata, Metadata.hasGaplessItem(reader.movie.userData) {
                let padding = track.mediaTicks &- track.skippedTicks &- track.presentedTicks
                let hasPadding = track.mediaTicks >= track.skippedTicks + track.presentedTicks
                writer.userData = Metadata.userData(writer.userData, settingGapless: track.skippedTicks,
                                                    padding: hasPadding ? padding : 0,
                                                    sampleCount: track.presentedTicks)
            }
            let sink = try MovieFileSink(destination: output, overwrite: overwrite, sources: [input])
            var target = sink
            var written: UInt64 = 0
            try writer.finish(.progressive, into: &target, progress: { written = $0.bytesDone })
            try sink.publish()
            var report = result
            report.outputPath = output
            report.sampleCount = track.sampleCount
            report.duration = track.seconds
            report.bytesWritten = written
            report.notes += done.notes
            report.warnings += done.warnings
            done.bytesWritten = written
            return report
        }
    }
}
