#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

/// `concat IN… OUT` and `concat --file-list LIST OUT`: the progress bar on a terminal, the
/// "wrote" line or --json object, warnings on stderr.
struct ConcatCommand: CommandRunner {
    static let chapters = Option("--chapters", "one chapter per input (its title tag, else its file name)")
    static let fileList = Option("--file-list", .text("LIST"), "read the inputs from FFmpeg's concat list "
                                 + "(file 'PATH' lines)")

    static let options: [Option] = [chapters, fileList, .overwrite, .quiet, .json]
    static let synopsis = ["concat [--chapters] [--file-list LIST] [--overwrite] [--json] [--quiet] IN… OUTPUT"]
    static let summary = "join files by stream copy, in order (audio-only, or clips with video)"
    static let details = """
        concat IN… OUTPUT joins files by stream copy, in order: audio-only inputs into one audio
        track (every packet at most once, never altered; at each seam at most two packets are
        left out, chosen for a dip of at most 12 ms, then a start within a frame + 2 ms of the
        part's place, never drifting; ALAC and FLAC to the sample), or clips with video (each
        from its first sync sample, its audio kept with its pictures). One edit per track, and
        iTunSMPB to match. Inputs coded differently exit 69 before anything is written.
        --chapters writes one chapter per input (its title tag, else its file name) in both
        forms; an OUTPUT named .m4b gets the audiobook brand. --file-list LIST reads the inputs
        from FFmpeg's concat list (file 'PATH' lines, # comments; paths relative to the list);
        any other directive exits 64. The worst and median dips printed are predicted from the
        packets' timing (no decoder runs).
        """

    var inputs: [String]
    var output: String
    var fileList: String?
    var chapters: Bool

    var common: CommonOptions

    init(_ line: ParsedLine) throws(UsageError) {
        common = CommonOptions(line)
        fileList = line.text(Self.fileList)
        chapters = line.has(Self.chapters)
        let paths = line.operands
        if fileList != nil {
            guard paths.count == 1 else {
                throw UsageError(message: "with --file-list, concat takes only the output: extract-audio concat "
                                 + "--file-list LIST OUTPUT")
            }
        } else if paths.count < 2 {
            throw UsageError(message: "concat takes inputs and an output: extract-audio concat IN1 IN2 … OUTPUT "
                             + "(or --file-list LIST OUTPUT)")
        }
        try Operand.refuseStandardStreams(paths, "concat reads and writes files, not standard input or output ('-')")
        output = paths[paths.count - 1]
        try Operand.checkName(of: output, "concat writes an MPEG-4 file: name it .m4a, .m4b or .mp4")
        inputs = Array(paths.dropLast())
    }

    func run() -> ExitStatus {
        var inputs = inputs
        if let list = fileList {
            do {
                inputs = try FileList.read(list)
            } catch let error as FileList.Problem {
                if common.json {
                    Terminal.line(errorJSON(input: list, output: output, code: "usage", status: .usage,
                                            message: error.message))
                } else {
                    Terminal.error(error.message)
                }
                return error.status
            } catch {
                return report(error, input: list, output: output, json: common.json)
            }
        }
        let options = ConcatOptions(chapters: chapters, overwrite: common.overwrite)
        let bar = common.printsText && Terminal.stderrIsTerminal
            ? ProgressBar(label: output) : nil
        do {
            let result = try Concatenation.join(inputs, to: output, options: options, progress: bar.map { bar in { bar.update($0) } })
            bar?.finish()
            for warning in result.warnings { Terminal.warning("\(output): \(warning)") }
            if common.json {
                Terminal.line(Self.json(result, inputs: inputs).compactText)
            } else if !common.quiet {
                // A join of video without audio has no audio seams to describe.
                let audio = result.audioPackets == 0 && result.hasVideo ? "no audio"
                    : "\(result.audioPackets) audio packets (\(result.droppedPackets) left out at the seams); seams: "
                    + "worst dip \(formatted(result.worstDip * 1000, digits: 1)) ms, median "
                    + "\(formatted(result.medianDip * 1000, digits: 1)) ms (predicted), worst start error "
                    + "\(formatted(result.worstStartError * 1000, digits: 1)) ms"
                Terminal.line("wrote \(output): \(inputs.count) inputs\(result.hasVideo ? " with video" : ""), "
                              + "\(formatted(result.duration, digits: 3)) s, \(audio); \(result.bytesWritten) bytes")
            }
            return .success
        } catch {
            bar?.finish()
            return report(error, input: inputs.first, output: output, json: common.json, about: inputs + [output])
        }
    }

    static func json(_ result: ConcatResult, inputs: [String]) -> JSON {
        let seams = result.parts.count - 1
        return JSON.object([
            ("status", .string("ok")), ("inputs", .array(inputs.map(JSON.string))),
            ("output", .string(result.outputPath)), ("kind", .string(result.hasVideo ? "video" : "audio")),
            ("duration", .double(result.duration)), ("packets", .int(result.audioPackets)),
            ("dropped_packets", .int(result.droppedPackets)),
            ("parts", .array(result.parts.map { part in
                .object([("path", .string(part.path)), ("start", .double(part.start)),
                         ("duration", .double(part.duration)), ("start_error_ms", .double(part.startError * 1000)),
                         ("seam_dip_ms", .double(part.seamDip * 1000)), ("dropped_packets", .int(part.droppedPackets))])
            })),
            ("seams", .object([("count", .int(max(seams, 0))), ("worst_dip_ms", .double(result.worstDip * 1000)),
                               ("median_dip_ms", .double(result.medianDip * 1000)),
                               ("worst_start_error_ms", .double(result.worstStartError * 1000))])),
            ("chapters", .int(result.chapterCount)), ("bytes", .int(Int(clamping: result.bytesWritten))),
            ("warnings", .array(result.warnings.map(JSON.string))),
            ("peak_memory_kib", .optional(System.peakMemoryKiB())),
        ])
    }
}

/// FFmpeg's concat list (the `concat` demuxer's script): `ffconcat version 1.0`, `file PATH`
/// lines, `#` comments and blank lines. PATH is a token as FFmpeg reads it: `'…'` quotes
/// anything but `'`, a backslash escapes the next character (so `'\''` is a quote), and a
/// relative path is relative to the list's folder. Any other directive (`duration`,
/// `inpoint`, `outpoint`, `file_packet_meta`, `option`, `stream`, …) changes what FFmpeg
/// would play, so it is refused rather than ignored.
enum FileList {
    struct Problem: Error {
        var message: String
        var status: ExitStatus
    }

    /// The largest list read (a list of a million files is 50 MB; anything larger is not one).
    static let maximumBytes = 64 << 20

    static func read(_ path: String) throws -> [String] {
        let file = try InputFile(path: path)
        guard file.length <= UInt64(maximumBytes) else {
            throw Problem(message: "\(path): \(file.length) bytes is too large for a concat list", status: .usage)
        }
        let bytes = try file.bytes(at: 0, count: Int(file.length))
        let folder = path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
        return try parse(String(decoding: bytes, as: UTF8.self), folder: folder, name: path)
    }

    static func parse(_ text: String, folder: String, name: String) throws -> [String] {
        var files: [String] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(raw)
            while let c = line.first, c == " " || c == "\t" || c == "\r" { line.removeFirst() }
            while let c = line.last, c == " " || c == "\t" || c == "\r" { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            let directive = String(line.prefix { $0 != " " && $0 != "\t" })
            var rest = line.dropFirst(directive.count)
            while let c = rest.first, c == " " || c == "\t" { rest.removeFirst() }
            switch directive {
            case "ffconcat":
                guard rest == "version 1.0" else {
                    throw Problem(message: "\(name):\(number + 1): only 'ffconcat version 1.0' is known", status: .usage)
                }
            case "file":
                let path = token(rest)
                guard !path.isEmpty else {
                    throw Problem(message: "\(name):\(number + 1): 'file' needs a path", status: .usage)
                }
                files.append(path.hasPrefix("/") ? path : folder + path)
            default:
                throw Problem(message: "\(name):\(number + 1): '\(directive)' is not supported (concat joins whole "
                              + "files; only 'file' lines, comments and 'ffconcat version 1.0' are read)",
                              status: .usage)
            }
        }
        guard !files.isEmpty else {
            throw Problem(message: "\(name) names no file", status: .usage)
        }
        return files
    }

    /// A token as FFmpeg's `av_get_token` reads it, up to the end of the line.
    static func token(_ text: Substring) -> String {
        var result = ""
        var quoted = false
        var escaped = false
        for c in text {
            if escaped {
                result.append(c)
                escaped = false
            } else if c == "\\" && !quoted {
                escaped = true
            } else if c == "'" {
                quoted.toggle()
            } else {
                result.append(c)
            }
        }
        return result
    }
}
