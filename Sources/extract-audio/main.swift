// extract-audio: copies an audio track of an MP4/MOV into a new .m4a, unchanged, and the
// commands beside it (one file each: Extract, Probe, Mux, Remux, Tag, Concat, Package). This file
// only reads the command line against the option table (OptionTable.swift) and dispatches.
// No Foundation here: start-up time matters for a tool run once per file.
// Darwin review (issue 21): signal(3) (sig_t is @convention(c) (Int32) -> Void, as in
// glibc) and _exit(2) were checked against Apple's manual pages; CI builds Linux only.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

/// Removes temporary output on SIGINT/SIGTERM, then exits with 128 + the signal number.
func installSignalHandlers() {
    let handler: @convention(c) (Int32) -> Void = { signal in
        TemporaryFiles.removeAll()
        _exit(128 + signal)
    }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
    // A file-size limit makes write(2) fail with EFBIG instead of killing the process.
    signal(SIGXFSZ, SIG_IGN)
    signal(SIGPIPE, SIG_IGN)
}

func run(_ arguments: [String]) -> ExitStatus {
    let command: any CommandRunner
    do {
        let line = try ParsedLine(arguments)
        switch line.request {
        case .help(let topic):
            Terminal.line(topic.map(Help.text(for:)) ?? Help.overview)
            return .success
        case .version:
            Terminal.line("extract-audio \(Help.version)")
            return .success
        case .run(let chosen):
            command = try chosen.runner.init(line)
        }
    } catch {
        if arguments.contains("--json") {
            Terminal.line(errorJSON(input: nil, output: nil, code: "usage", status: .usage, message: error.message))
        } else {
            Terminal.error(error.message)
        }
        return .usage
    }
    installSignalHandlers()
    return command.run()
}

exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
