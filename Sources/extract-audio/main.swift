// extract-audio: copies the first audio track of an MP4/MOV into a new .m4a, unchanged.
// No Foundation here: start-up time matters for a tool run once per file.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

let version = "0.1.0"

let usage = """
    Usage:
      extract-audio [--track N | --track-id ID] [--overwrite] [--salvage] INPUT OUTPUT.m4a
      extract-audio probe [--json] INPUT
      extract-audio --help | --version

    Copies an audio track of an MP4/MOV/M4A/3GP file (regular or fragmented) into a new
    .m4a without re-encoding: the packets and their timing are kept exactly (like
    ffmpeg -c:a copy), and only the audio bytes of the input are read. Codecs: AAC,
    MP3/MP2 in mp4a, ALAC, AC-3, E-AC-3, Opus, FLAC.

    Options:
      -t, --track N    extract the N-th audio track, counted from 0 (default 0: the first)
          --track-id ID
                       extract the audio track with this track ID (see probe)
          --overwrite  replace OUTPUT if it exists (atomically); without it an existing
                       OUTPUT is never touched
          --salvage    when INPUT is truncated (a recording cut short), extract the
                       complete part and say on stderr how much was recovered
      probe INPUT      describe INPUT and its tracks (codec, sample rate, channels,
                       duration, samples, bitrate, language, enabled); --json for
                       machine-readable output. --list INPUT is the same table.
      -h, --help       show this help
          --version    show the version

    Examples:
      extract-audio talk.mp4 talk.m4a
      extract-audio --track 1 interview.mov commentary.m4a
      extract-audio --salvage crashed-recording.mp4 rescued.m4a
      extract-audio probe --json movie.mp4

    The output is written under a temporary name beside OUTPUT and moved into place only
    when complete; on failure or Ctrl-C nothing is left behind.

    Exit status:
      0 success            64 usage error          65 malformed or truncated input
      66 cannot open input 69 unsupported codec    73 output exists / cannot be created
      74 I/O error         79 no audio track       130/143 interrupted (SIGINT/SIGTERM)
    """

func printError(_ message: String) {
    var line = "extract-audio: error: " + message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

func printWarning(_ message: String) {
    var line = "extract-audio: warning: " + message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

func printLine(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

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

func run() -> ExitStatus {
    let arguments: Arguments
    do {
        arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    } catch let error as Arguments.UsageError {
        printError(error.message)
        return .usage
    } catch {
        return .usage
    }
    installSignalHandlers()
    do {
        switch arguments.mode {
        case .help:
            printLine(usage)
        case .version:
            printLine("extract-audio \(version)")
        case .probe(let input, let json):
            let report = try AudioExtractor.probe(input)
            printLine(json ? Probe.json(report, path: input) : Probe.text(report))
        case .extract(let input, let output):
            let track: TrackChoice = arguments.trackID.map { .trackID($0) }
                ?? arguments.audioTrack.map { .audioIndex($0) } ?? .firstAudio
            let options = ExtractionOptions(track: track, overwrite: arguments.overwrite, salvage: arguments.salvage)
            let result = try AudioExtractor.extract(from: input, to: output, options: options)
            for note in result.notes { printWarning(note) }
            if let salvage = result.salvage {
                printWarning("\(input) is truncated at byte \(salvage.fileLength) (in the box at byte "
                             + "\(salvage.cutBoxOffset)); recovered \(formatted(salvage.recoveredSeconds, digits: 3)) s "
                             + "of audio")
            }
            printLine("wrote \(result.outputPath): \(result.codec), \(result.sampleRate) Hz, "
                      + "\(result.channelCount) ch, \(formatted(result.duration, digits: 3)) s, "
                      + "\(result.sampleCount) packets, \(result.bytesWritten) bytes")
        }
        return .success
    } catch let error as RemuxError {
        printError(error.message)
        return ExitStatus(error.code)
    } catch {
        printError("\(error)")
        return .ioError
    }
}

exit(run().rawValue)
