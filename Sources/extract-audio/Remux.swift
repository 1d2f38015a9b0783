// The `remux` command and the cut options (--from/--to/--duration) it shares with extraction.
import AudioRemux
import ISOBMFF

/// The options of a cut and of `remux`, parsed from the command line.
struct CutOptions: Equatable {
    var from: CutTime?
    var to: CutTime?
    var duration: CutTime?
    var dropAudio = false
    var dropVideo = false
    var trackIDs: [UInt32] = []
    var fragmentSeconds: Double?
    var splitChapters = false

    /// Reads one option (`value` gives its argument).
    mutating func parse(_ name: String, value: () throws -> String) throws {
        func time() throws -> CutTime {
            let text = try value()
            guard let time = CutTime(parsing: text) else {
                throw Arguments.UsageError(message: "\(name) takes a time as seconds (90, 2.52) or [[h:]m:]s[.frac] "
                                           + "(1:30, 01:02:03.5), not '\(text)'")
            }
            return time
        }
        switch name {
        case "--from": from = try time()
        case "--to": to = try time()
        case "--duration": duration = try time()
        case "--drop-audio": dropAudio = true
        case "--drop-video": dropVideo = true
        case "--split-chapters": splitChapters = true
        case "--fragment":
            let text = try value()
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 3600 else {
                throw Arguments.UsageError(message: "--fragment takes a fragment duration in seconds (above 0, at "
                                           + "most 3600), not '\(text)'")
            }
            fragmentSeconds = seconds
        default: break
        }
    }

    /// The range asked for, nil when none was: `--to` or `--duration` after `--from` (0 when
    /// not given). An empty or reversed range is a usage error.
    func range() throws -> CutRange? {
        guard from != nil || to != nil || duration != nil else { return nil }
        let start = from ?? CutTime(nanoseconds: 0)
        if to != nil && duration != nil {
            throw Arguments.UsageError(message: "use --to or --duration, not both")
        }
        var end = to
        if let duration {
            guard duration.nanoseconds > 0 else {
                throw Arguments.UsageError(message: "--duration 0 is an empty range: nothing to write")
            }
            let (sum, overflow) = start.nanoseconds.addingReportingOverflow(duration.nanoseconds)
            end = CutTime(nanoseconds: overflow ? UInt64.max : sum)
        }
        if let end, end <= start {
            throw Arguments.UsageError(message: end == start
                                       ? "--from and --to are both \(start) s: the range is empty"
                                       : "--from \(start) s is after --to \(end) s: the range is empty")
        }
        return CutRange(from: start, to: end)
    }

    /// `remux IN OUT`: checks the positional arguments and the range.
    func remuxMode(_ positional: [String]) throws -> Arguments.Mode {
        guard positional.count == 2 else {
            throw Arguments.UsageError(message: "remux takes an input and an output: extract-audio remux IN OUT.mp4 "
                                       + "[--from T] [--to T] (see --help)")
        }
        guard !positional.contains(Arguments.standardStream) else {
            throw Arguments.UsageError(message: "remux reads and writes files, not standard input or output ('-')")
        }
        if let ext = Arguments.extensionOf(positional[1]), Arguments.foreignExtensions.contains(ext) {
            throw Arguments.UsageError(message: "the output is named .\(ext), but remux writes an MP4 or a MOV: "
                                       + "name it .mp4 or .mov")
        }
        if dropAudio && dropVideo && trackIDs.isEmpty {
            throw Arguments.UsageError(message: "--drop-audio and --drop-video together leave no audio or video")
        }
        _ = try range()
        return .remux(input: positional[0], output: positional[1])
    }
}

enum RemuxCommand {
    /// Runs `remux`: one line on success (or a JSON object), one line on failure.
    static func run(input: String, output: String, arguments: Arguments) -> ExitStatus {
        var options = RemuxOptions()
        options.tags = arguments.tagChanges
        options.keepMetadata = arguments.keepMetadata
        do {
            options.range = try arguments.cut.range()
        } catch let error as Arguments.UsageError {
            Terminal.error(error.message)
            return .usage
        } catch {
            return .usage
        }
        options.dropAudio = arguments.cut.dropAudio
        options.dropVideo = arguments.cut.dropVideo
        options.trackIDs = arguments.cut.trackIDs
        options.fragmentSeconds = arguments.cut.fragmentSeconds
        options.overwrite = arguments.overwrite
        let start = Terminal.now()
        do {
            let result = try Remux.run(from: input, to: output, options: options)
            let seconds = Terminal.now() - start
            if arguments.json {
                let tracks = result.tracks.map { track in
                    JSON.object([("input_track_id", .int(Int(track.inputID))),
                                 ("track_id", .int(Int(track.outputID))), ("codec", .string(track.format)),
                                 ("packets", .int(track.sampleCount)), ("duration", .double(track.seconds)),
                                 ("edit_rounding", .double(track.editRounding))])
                }
                Terminal.line(JSON.object([
                    ("input", .string(input)), ("output", .string(output)), ("status", .string("ok")),
                    ("duration", .double(result.duration)), ("tracks", .array(tracks)),
                    ("edit_rounding", .double(result.tracks.map(\.editRounding).max() ?? 0)),
                    ("bytes", .int(Int(clamping: result.bytesWritten))), ("seconds", .double(seconds)),
                    ("notes", .array(result.notes.map(JSON.string))),
                    ("warnings", .array(result.warnings.map(JSON.string))),
                ]).compactText)
                return .success
            }
            if !arguments.quiet {
                for note in result.notes { Terminal.warning("\(input): \(note)") }
            }
            for warning in result.warnings { Terminal.warning("\(input): \(warning)") }
            if !arguments.quiet {
                let list = result.tracks.map { "\($0.format) (\($0.sampleCount) packets)" }.joined(separator: ", ")
                Terminal.line("wrote \(output): \(result.tracks.count) track(s) \(list), "
                              + "\(formatted(result.duration, digits: 3)) s, \(result.bytesWritten) bytes")
            }
            return .success
        } catch {
            return report(error, input: input, output: output, json: arguments.json, about: [input, output])
        }
    }
}

extension CutOptions {
    /// Checks the cut options of an extraction: a well-formed range, files rather than
    /// standard streams, and `--split-chapters` with `--output-dir` and no range.
    func checkExtraction(inputs: [String], outputDirectory: String?) throws {
        let range = try range()
        if splitChapters {
            guard outputDirectory != nil else {
                throw Arguments.UsageError(message: "--split-chapters writes one file per chapter: give the folder "
                                           + "with --output-dir DIR")
            }
            guard range == nil else {
                throw Arguments.UsageError(message: "use --split-chapters or --from/--to/--duration, not both")
            }
        }
        if range != nil || splitChapters, inputs.contains(Arguments.standardStream) {
            throw Arguments.UsageError(message: "cuts read and write files, not standard input or output ('-')")
        }
    }
}

enum CutCommand {
    /// The cut extraction of `job` when a range or `--split-chapters` was asked for; nil to
    /// extract the whole track.
    static func extract(_ input: InputFile, job: Arguments.Job, options: ExtractionOptions,
                        arguments: Arguments) throws -> ExtractionResult? {
        if arguments.cut.splitChapters, let directory = arguments.outputDirectory {
            let pieces = try AudioCut.splitChapters(of: input, into: directory, options: options)
            guard var last = pieces.last else { return nil }
            for piece in pieces.dropLast() where !arguments.quiet && !arguments.json {
                Terminal.line("wrote \(piece.outputPath): \(formatted(piece.duration, digits: 3)) s, "
                              + "\(piece.sampleCount) packets, \(piece.bytesWritten) bytes")
            }
            last.notes.append("split into \(pieces.count) chapter files")
            return last
        }
        guard let range = try? arguments.cut.range() else { return nil }
        return try AudioCut.extract(from: input, to: job.output, range: range, options: options)
    }
}
