// Extraction, the command without a word: `extract-audio INPUT OUTPUT.m4a`, or several
// inputs into `--output-dir` (run by Batch.swift), whole or cut (--from/--to, --split-chapters).
// Darwin review (issue 21), checked against Apple's manual pages: mkdir, stat, lstat and
// st_mode & S_IFMT (mkdir(2), stat(2); mode_t is UInt16 there), isatty(3), strerror(3).
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

struct ExtractCommand: CommandRunner {
    static let track = Option("--track", short: "-t", .integer("N", 0...Int.max,
                              expected: "a number from 0 (the first audio track)"),
                              "extract the N-th audio track, counted from 0 (default: the first)")
    static let trackID = Option("--track-id", .trackID, "extract the audio track with this track ID (see probe)")
    static let outputDirectory = Option("--output-dir", short: "-o", .text("DIR"),
                                        "extract each INPUT to DIR/NAME.m4a (DIR is created if missing)")
    static let jobs = Option("--jobs", short: "-j", .integer("N", 1...1024,
                             expected: "a number of inputs at a time, 1 to 1024"),
                             "with --output-dir: N inputs at a time (default: the number of processors)")
    static let skipExisting = Option("--skip-existing", "leave inputs whose output exists alone (to rerun a batch)")
    static let salvage = Option("--salvage", "when INPUT is truncated, extract the complete part (stderr says how "
                                + "much)")
    static let splitChapters = Option("--split-chapters", "with --output-dir: one DIR/NN - Title.m4a per chapter")

    static let options: [Option] = [
        track, trackID, outputDirectory, .overwrite, skipExisting, jobs, salvage, .noMetadata, .from, .to, .duration,
        splitChapters, .set, .cover, .chaptersFrom, .quiet, .json,
    ]
    static let synopsis = ["[OPTIONS] INPUT OUTPUT.m4a", "[OPTIONS] INPUT… --output-dir DIR"]
    static let summary = "copy an audio track into a new .m4a (no command word)"
    static let details = """
        Copies an audio track of an MP4/MOV/M4A/3GP file (regular or fragmented) into a new
        .m4a without re-encoding: the packets and their timing are kept exactly (like
        ffmpeg -c:a copy), and only the audio bytes of the input are read. With --output-dir a
        failing file does not stop the others, a summary ends the run, and inputs of the same
        name get NAME-2.m4a, NAME-3.m4a, … --from T --to T (or --duration D) keep [T, T) of the
        audio, to the sample.

        INPUT - reads standard input (copied to a temporary file first, removed afterwards);
        OUTPUT - streams the M4A to standard output, and the "wrote" line or --json object goes
        to stderr; a stream cannot be taken back, so a failure midway exits non-zero after a
        partial file has gone out.

        The output is written under a temporary name beside OUTPUT and moved into place only
        when complete; on failure or Ctrl-C nothing is left behind. With --quiet, warnings
        (something dropped, repaired or salvaged) still print.
        """

    struct Job: Equatable, Sendable {
        var input: String
        var output: String
        /// Set when the natural output name was taken by an earlier input of the run: that
        /// input's path.
        var collidedWith: String?
    }

    var jobs: [Job]
    var audioTrack: Int?
    var trackID: UInt32?
    var skipExisting: Bool
    /// The folder of a batch run, which is created when missing.
    var outputDirectory: String?
    /// `--jobs N`: inputs of a batch extracted at a time; nil for the default (Batch.swift).
    var workers: Int?
    var salvage: Bool
    var cut: CutRangeOptions
    var splitChapters: Bool

    var common: CommonOptions

    init(_ line: ParsedLine) throws(UsageError) {
        common = CommonOptions(line)
        audioTrack = line.integer(Self.track)
        trackID = line.trackIDs(Self.trackID).last
        skipExisting = line.has(Self.skipExisting)
        outputDirectory = line.text(Self.outputDirectory)
        workers = line.integer(Self.jobs)
        salvage = line.has(Self.salvage)
        cut = CutRangeOptions(line)
        splitChapters = line.has(Self.splitChapters)
        let inputs = line.operands
        let range = try cut.range()
        if splitChapters {
            guard outputDirectory != nil else {
                throw UsageError(message: "--split-chapters writes one file per chapter: give the folder "
                                 + "with --output-dir DIR")
            }
            guard range == nil else {
                throw UsageError(message: "use --split-chapters or --from/--to/--duration, not both")
            }
        }
        if range != nil || splitChapters, inputs.contains(Operand.standardStream) {
            throw UsageError(message: "cuts read and write files, not standard input or output ('-')")
        }
        if splitChapters && common.tags.chaptersFrom != nil {
            throw UsageError(message: "--split-chapters cuts at the input's chapters: it does not take --chapters-from")
        }
        if audioTrack != nil && trackID != nil {
            throw UsageError(message: "use --track or --track-id, not both")
        }
        if common.overwrite && skipExisting {
            throw UsageError(message: "use --overwrite or --skip-existing, not both")
        }
        if workers != nil && outputDirectory == nil {
            throw UsageError(message: "--jobs goes with --output-dir: one input and output run alone")
        }
        if let outputDirectory {
            guard !inputs.isEmpty else {
                throw UsageError(message: "--output-dir needs at least one input file")
            }
            guard outputDirectory != Operand.standardStream, !inputs.contains(Operand.standardStream) else {
                throw UsageError(message: "--output-dir takes files, not standard input or output ('-')")
            }
            jobs = OutputNames.jobs(inputs, in: outputDirectory)
            return
        }
        guard inputs.count == 2 else {
            throw UsageError(message: inputs.count < 2
                             ? "needs an input and an output file: extract-audio INPUT OUTPUT.m4a (see --help)"
                             : "several inputs need an output directory: extract-audio IN1 IN2 … --output-dir DIR")
        }
        try Operand.checkName(of: inputs[1], "extract-audio writes an MPEG-4 audio file (the codec is copied, not "
                              + "converted): name it .m4a")
        jobs = [Job(input: inputs[0], output: inputs[1])]
    }

    func run() -> ExitStatus {
        var command = self
        do {
            command.tagChanges = try common.tags.checkedChanges(json: common.json)
        } catch {
            return error
        }
        if let job = jobs.first, job.output == Operand.standardStream, isatty(1) != 0 {
            Terminal.error("standard output is a terminal: redirect it to a file or a pipe to receive the M4A")
            return .usage
        }
        if let directory = outputDirectory {
            do {
                try makeDirectory(directory)
            } catch {
                return report(error, input: nil, output: directory, json: common.json, about: [directory])
            }
        }
        var firstFailure: ExitStatus?
        var failed = 0
        var skipped = 0
        let showsBar = common.printsText && Terminal.stderrIsTerminal
        let outcomes = Batch.run(count: jobs.count, workers: workers ?? Batch.defaultWorkers,
                                 showsProgress: showsBar) { [command] index in command.extract(command.jobs[index]) }
        for outcome in outcomes {
            switch outcome {
            case .extracted: break
            case .skipped: skipped += 1
            case .failed(let status):
                failed += 1
                firstFailure = firstFailure ?? status
            }
        }
        if jobs.count > 1 && common.printsText {
            var summary = "\(jobs.count - failed - skipped) of \(jobs.count) extracted"
                + (skipped > 0 ? ", \(skipped) skipped (output exists)" : "") + (failed > 0 ? ", \(failed) failed" : "")
            // Only the renamed inputs that were written: a failed one has no name to report.
            let renamed = zip(jobs, outcomes).filter { job, outcome in
                guard job.collidedWith != nil, case .extracted = outcome else { return false }
                return true
            }.map(\.0)
            if !renamed.isEmpty {
                summary += "; same names: " + renamed.map { job in
                    "\(job.input) was written as \(job.output) (\(job.collidedWith ?? "") took the name)"
                }.joined(separator: ", ")
            }
            Terminal.write("extract-audio: \(summary)\n", to: 2)
        }
        return firstFailure ?? .success
    }

    /// The checked changes of --set, --cover and --chapters-from: filled in by `run()`
    /// before any file is touched.
    var tagChanges = TagChanges()

    func extract(_ job: Job) -> Outcome {
        let toStdout = job.output == Operand.standardStream
        let fromStdin = job.input == Operand.standardStream
        let shownInput = fromStdin ? "standard input" : job.input
        let shownOutput = toStdout ? "standard output" : job.output
        // With the M4A on stdout, everything said goes to stderr.
        let reportTo: Int32 = toStdout ? 2 : 1
        if skipExisting && !toStdout {
            var status = stat()
            if lstat(job.output, &status) == 0 {
                if common.printsText {
                    Terminal.write("skipped \(job.input): \(job.output) exists\n", to: reportTo)
                }
                return .skipped
            }
        }
        let track: TrackChoice = trackID.map { .trackID($0) } ?? audioTrack.map { .audioIndex($0) } ?? .firstAudio
        var options = ExtractionOptions(track: track, overwrite: common.overwrite, salvage: salvage,
                                        keepMetadata: common.keepMetadata)
        options.tags = tagChanges
        // A batch worker's text is held back (Batch.swift): the batch draws one bar of its own.
        let bar = common.printsText && Terminal.stderrIsTerminal && Captured.current == nil
            ? ProgressBar(label: job.input) : nil
        let start = Terminal.now()
        var spool: SpooledFile?
        defer { spool?.remove() }
        do {
            let input: InputFile
            if fromStdin {
                let copy = try SpooledFile(copying: 0)
                spool = copy
                input = try InputFile(path: copy.path, name: shownInput)
            } else {
                input = try InputFile(path: job.input)
            }
            let result: ExtractionResult
            if let cut = try extractCut(input, job: job, options: options) {
                result = cut
            } else if toStdout {
                var sink = StreamSink()
                result = try AudioExtractor.extract(from: input, to: &sink, options: options,
                                                    progress: bar.map { bar in { bar.update($0) } })
            } else {
                result = try AudioExtractor.extract(from: input, to: job.output, options: options,
                                                    progress: bar.map { bar in { bar.update($0) } })
            }
            bar?.finish()
            let seconds = Terminal.now() - start
            if common.json {
                Terminal.write(ExtractOutput.json(result, job: job, seconds: seconds).compactText + "\n", to: reportTo)
                return .extracted
            }
            ExtractOutput.say(result, input: shownInput, output: toStdout ? shownOutput : result.outputPath,
                              quiet: common.quiet, to: reportTo)
            return .extracted
        } catch {
            bar?.finish()
            return .failed(report(error, input: job.input, output: job.output, json: common.json,
                                  about: [shownInput, shownOutput], salvaging: salvage, jsonTo: reportTo))
        }
    }

    /// The cut extraction of `job` when a range or `--split-chapters` was asked for; nil to
    /// extract the whole track.
    func extractCut(_ input: InputFile, job: Job, options: ExtractionOptions) throws -> ExtractionResult? {
        if splitChapters, let directory = outputDirectory {
            let pieces = try AudioCut.splitChapters(of: input, into: directory, options: options)
            guard var last = pieces.last else { return nil }
            for piece in pieces.dropLast() where common.printsText {
                Terminal.line("wrote \(piece.outputPath): \(formatted(piece.duration, digits: 3)) s, "
                              + "\(piece.sampleCount) packets, \(piece.bytesWritten) bytes")
            }
            last.notes.append("split into \(pieces.count) chapter files")
            return last
        }
        guard let range = try? cut.range() else { return nil }
        return try AudioCut.extract(from: input, to: job.output, range: range, options: options)
    }
}

/// How one input of a run ended.
enum Outcome: Sendable {
    case extracted
    case skipped
    case failed(ExitStatus)
}

/// What an extraction says: its `--json` object, or its notes, warnings and "wrote" line.
enum ExtractOutput {
    static func json(_ result: ExtractionResult, job: ExtractCommand.Job, seconds: Double) -> JSON {
        var members: [(String, JSON)] = [
            ("input", .string(job.input)), ("output", .string(job.output)), ("status", .string("ok")),
            ("codec", .string(result.codec)), ("sample_rate", .int(result.sampleRate)),
            ("channels", .int(result.channelCount)), ("duration", .double(result.duration)),
            ("packets", .int(result.sampleCount)), ("bytes", .int(Int(clamping: result.bytesWritten))),
            ("seconds", .double(seconds)), ("peak_memory_kib", .optional(System.peakMemoryKiB())),
            ("notes", .array(result.notes.map(JSON.string))),
            ("warnings", .array(result.warnings.map(JSON.string))),
            ("dropped_tracks", JSON.droppedTracks(result.droppedTracks)),
        ]
        if let salvage = result.salvage {
            members.append(("salvaged", .object([("file_length", .int(Int(clamping: salvage.fileLength))),
                                                 ("cut_box_offset", .int(Int(clamping: salvage.cutBoxOffset))),
                                                 ("recovered_seconds", .double(salvage.recoveredSeconds))])))
        }
        return JSON.object(members)
    }

    static func say(_ result: ExtractionResult, input: String, output: String, quiet: Bool, to descriptor: Int32) {
        if !quiet {
            for note in result.notes { Terminal.warning("\(input): \(note)") }
        }
        // Said even with --quiet: they are not progress, the output differs from the input.
        for warning in result.warnings { Terminal.warning("\(input): \(warning)") }
        if let salvage = result.salvage {
            Terminal.warning("\(input) is truncated at byte \(salvage.fileLength) (in the box at byte "
                             + "\(salvage.cutBoxOffset)); recovered "
                             + "\(formatted(salvage.recoveredSeconds, digits: 3)) s of audio")
        }
        if !quiet {
            Terminal.write("wrote \(output): \(result.codec), \(result.sampleRate) Hz, \(result.channelCount) ch, "
                           + "\(formatted(result.duration, digits: 3)) s, \(result.sampleCount) packets, "
                           + "\(result.bytesWritten) bytes\n", to: descriptor)
        }
    }
}

/// Creates `path` and its missing parents (`mkdir -p`).
func makeDirectory(_ path: String) throws {
    var status = stat()
    if stat(path, &status) == 0 {
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw RemuxError(.cannotCreateOutput, "cannot use \(path) as the output directory: it is not a directory")
        }
        return
    }
    var parent = path
    while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
    if let slash = parent.lastIndex(of: "/"), slash != parent.startIndex {
        try makeDirectory(String(parent[..<slash]))
    }
    if mkdir(path, 0o777) != 0 && errno != EEXIST {
        let reason = String(cString: strerror(errno))
        throw RemuxError(.cannotCreateOutput, "cannot create the output directory \(path): \(reason)")
    }
}
