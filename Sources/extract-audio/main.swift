// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - signal(SIGINT/SIGTERM, handler), signal(SIGXFSZ/SIGPIPE, SIG_IGN): signal(3); the
//     handler type is sig_t, @convention(c) (Int32) -> Void, as in glibc. _exit: _exit(2).
//   - mkdir, stat, lstat, st_mode & S_IFMT: mkdir(2), stat(2) (mode_t is UInt16 there).
//   - isatty: isatty(3). strerror: strerror(3). link/rename: only in messages.
// extract-audio: copies an audio track of an MP4/MOV into a new .m4a, unchanged.
// No Foundation here: start-up time matters for a tool run once per file.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

let version = "0.2.0"

let usage = """
    Usage:
      extract-audio [OPTIONS] INPUT OUTPUT.m4a
      extract-audio [OPTIONS] INPUT… --output-dir DIR
      extract-audio probe [--json] INPUT...       (or: extract-audio --list INPUT...)
      extract-audio probe --packets [--track-id ID] [--json] INPUT
      extract-audio mux VIDEO --audio MUSIC… [--offset S] [--loop] [--exact-seams]
                        [--keep-original-audio] [--no-metadata] [--set K=V]… [--cover IMG]…
                        [--chapters-from FILE] OUTPUT.mp4
      extract-audio remux IN OUT.mp4 [--from T] [--to T | --duration D] [--drop-audio] [--drop-video]
                          [--track-id ID]… [--fragment SECONDS] [--no-metadata] [--set K=V]…
                          [--cover IMG]… [--chapters-from FILE]
      extract-audio tag [--set KEY=VALUE]… [--remove KEY]… [--remove-all] [--cover IMAGE]…
                        [--remove-cover] [--chapters-from FILE | --remove-chapters] [--dry-run]
                        [--json] FILE…
      extract-audio concat [--chapters] [--file-list LIST] [--overwrite] [--json] [--quiet] IN… OUTPUT
      extract-audio help | --help | --version

    Copies an audio track of an MP4/MOV/M4A/3GP file (regular or fragmented) into a new
    .m4a without re-encoding: the packets and their timing are kept exactly (like
    ffmpeg -c:a copy), and only the audio bytes of the input are read. Codecs: AAC,
    MP3/MP2 in mp4a, ALAC, AC-3, E-AC-3, Opus, FLAC.

    Options:
      -t, --track N       extract the N-th audio track, counted from 0 (default: the first)
          --track-id ID   extract the audio track with this track ID (see probe)
      -o, --output-dir DIR
                          extract each INPUT to DIR/NAME.m4a (DIR is created if missing); a
                          failing file does not stop the others, and a summary is printed at
                          the end; inputs of the same name get NAME-2.m4a, NAME-3.m4a, …
          --overwrite     replace an existing output (atomically); without it an existing
                          file is never touched. Only a regular file (or a link to one, which
                          is replaced as a link) is ever replaced
          --skip-existing leave inputs whose output exists alone (to rerun a batch)
      -j, --jobs N        with --output-dir: extract N inputs at a time (default: the number
                          of processors); lines, --json objects and the summary still come
                          in input order, and one progress bar shows the whole batch
          --salvage       when INPUT is truncated (a recording cut short), extract the
                          complete part and say on stderr how much was recovered
          --no-metadata   drop tags, cover art, chapters and the iTunSMPB gapless item
                          (kept by default; the edit list always keeps gapless timing)
          --from T, --to T, --duration D
                          keep only [T, T) of the audio, to the sample (seconds or
                          [[h:]m:]s[.frac]); --duration D is --to FROM+D
          --split-chapters
                          with --output-dir: one DIR/NN - Title.m4a per chapter
          --set KEY=VALUE, --cover IMAGE, --chapters-from FILE
                          tag the output in the same pass, as tag does (also for remux
                          and mux); with --no-metadata the input's tags go first
      -q, --quiet         no progress bar, no "wrote" line, no summary; errors and warnings
                          (something dropped, repaired or salvaged) still print
          --json          print one JSON object per input on stdout (result or error)
      -h, --help          show this help
          --version       show the version

    INPUT - reads standard input (copied to a temporary file first, removed afterwards);
    OUTPUT - streams the M4A to standard output, and the "wrote" line or --json object goes
    to stderr; a stream cannot be taken back, so a failure midway exits non-zero after a
    partial file has gone out. Each command takes only its own options.

    probe INPUT... describes each INPUT and its tracks (codec, sample rate, channels, duration,
    samples, bitrate, language, enabled, rotation, whether extraction would work); with --json
    as one JSON object per input. --list INPUT... is the same.
    probe --packets INPUT lists every sample of every track (or of --track-id ID) in decode
    order, one line each (one JSON object each with --json): track_id, index, dts, pts,
    duration (in the track's timescale, no edit list applied), size, offset, sync; the
    numbers ffprobe -ignore_editlist 1 -show_packets prints. Where a video sample's
    bitstream disagrees with its container sync mark, bitstream_sync says what it says.
    A damaged track is named on stderr (with --json, as one object: track_id, problem,
    reason) and the others listed; a file cut short lists the samples wholly inside it.
    Exit 65 only when nothing can be listed.

    mux puts music under a video, also by stream copy: the video track is copied as it
    is, and one audio track holds the --audio clips back to back from the start (or from
    --offset S seconds), cut to the sample where the video ends. The clips are joined at
    packet level under one edit, which plays in every player: the clips' priming is
    skipped by whole packets (the last priming packet stays, as the decoder's pre-roll) and
    each seam lands within half an audio frame of the exact point, never drifting. --exact-seams joins them to the sample with one edit per clip instead, for
    players that honour multi-entry edit lists (AVFoundation/QuickTime); others may stop
    or gap. --loop repeats the clips until the video ends; --keep-original-audio keeps the
    video's own audio as a second, disabled track (else it is dropped, as stderr says).
    The video's tags, cover art and metadata keys (make, model, location, creation date)
    are kept unless --no-metadata. The clips must share codec, sample rate, channels and
    configuration.

    remux copies every track (or those kept by --track-id, --drop-audio, --drop-video) into
    a new MP4, or a MOV when OUTPUT is named .mov (an .mp4 cannot carry QuickTime timecode
    or PCM in twos/sowt: those tracks are dropped with a warning), without re-encoding.
    --from T --to T (or --duration D) keep [T, T): the video is copied from the sync sample
    at or before --from and every track's edit list presents exactly the range (times as
    seconds or [[h:]m:]s[.frac]). --fragment SECONDS writes a fragmented MP4 (fMP4) with
    fragments of about SECONDS starting at sync samples. Metadata is kept; --no-metadata drops
    the tags and the chapter tracks.

    tag FILE… prints each file's tags (iTunes-style items in moov/udta/meta/ilst): friendly
    keys in text; with --json one object per file, each item with its friendly key (or
    null), raw code, type and typed value. --set KEY=VALUE (repeatable) sets an item, KEY
    being a friendly key (title, artist, album, album_artist, date, genre, track, disc,
    comment, composer, lyrics, grouping, bpm, compilation, sort_title, copyright, encoder,
    description, media_kind, … see the README), a four-character code (©nam) or
    ----:MEAN:NAME; track and disc take N or N/TOTAL (0-65535), compilation true or false.
    --remove KEY, --remove-all (all but the gapless information, iTunSMPB, which --remove
    ----:com.apple.iTunes:iTunSMPB removes); --cover IMAGE (JPEG or PNG, repeatable) replaces the covers,
    --remove-cover drops them. --chapters-from FILE replaces the chapters (mp4chaps lines
    "HH:MM:SS.mmm Title" or an ;FFMETADATA1 file; at most 4096) in both forms: a QuickTime
    chapter track (replacing any) and Nero's chpl (at most 255: past that, the track only,
    with a warning); --remove-chapters removes both. --dry-run prints the tags the change would give and writes
    nothing. Unknown items are kept byte for byte. The file is rewritten beside itself and
    moved into place atomically (samples and every other box copied unchanged), leaving
    padding after moov; the next edit that fits that padding is written in place, in steps
    that each leave the old or the new tags (see the README). Each file is judged alone.

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

    Examples:
      extract-audio talk.mp4 talk.m4a
      extract-audio --track 1 interview.mov commentary.m4a
      extract-audio --salvage crashed-recording.mp4 rescued.m4a
      extract-audio *.mp4 --output-dir soundtracks/
      extract-audio probe --json movie.mp4
      extract-audio remux --from 1:05 --to 1:20.5 match.mp4 goal.mp4
      extract-audio mux holiday.mp4 --audio song1.m4a --audio song2.m4a holiday-music.mp4
      extract-audio tag --set title="Blue in Green" --set track=3/10 --cover front.jpg song.m4a
      extract-audio concat --chapters part1.m4a part2.m4a part3.m4a book.m4b

    The output is written under a temporary name beside OUTPUT and moved into place only
    when complete; on failure or Ctrl-C nothing is left behind.
    With --quiet, warnings (something dropped, repaired or salvaged) still print.

    Exit status:
      0 success            64 usage error, bad tag key or value   65 malformed or truncated input
      66 cannot open input 69 unsupported codec or cover image    73 output exists / cannot be created
                           (tag: the file or its folder is read-only, or hard-linked)
      71 written and in place, but its folder could not be synced to disk
      74 I/O error (the destination left as it was)
      75 tag: the file is being edited by another run, try again
      79 no audio track    130/143 interrupted (SIGINT/SIGTERM)
      With several inputs: the status of the first that failed.
    """

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

func errorJSON(input: String?, output: String?, code: String, status: ExitStatus, message: String,
               path: String? = nil, offset: UInt64? = nil, reason: String? = nil) -> String {
    var error: [(String, JSON)] = [("code", .string(code)), ("exit_status", .int(Int(status.rawValue))),
                                   ("message", .string(message))]
    if let reason { error.append(("reason", .string(reason))) }
    let memory: JSON = .optional(System.peakMemoryKiB())
    if let path { error.append(("box_path", .string(path))) }
    if let offset { error.append(("byte_offset", .int(Int(clamping: offset)))) }
    return JSON.object([("input", .optional(input)), ("output", .optional(output)), ("status", .string("error")),
                        ("error", .object(error)), ("peak_memory_kib", memory)]).compactText
}

/// The library's message with what only the command line knows: the file it is about when
/// the message does not name it (a batch is unreadable otherwise), and the option that
/// would help. The library itself never mentions command-line flags.
func cliMessage(_ error: RemuxError, about files: [String], salvaging: Bool) -> String {
    var message = error.message
    if let subject = files.first, !files.contains(where: { message.containsBytes(of: $0) }) {
        message = "\(subject): \(message)"
    }
    switch error.code {
    case .destinationExists:
        message += " (use --overwrite to replace it)"
    case .truncatedInput where !salvaging && message.hasSuffix("which salvaging can extract"):
        message += " (use --salvage)"
    default: break
    }
    return message
}

/// Prints a failure as one line on stderr (or a JSON object on `jsonTo`) and gives its status.
func report(_ error: Error, input: String?, output: String?, json: Bool, about files: [String] = [],
            salvaging: Bool = false, jsonTo descriptor: Int32 = 1) -> ExitStatus {
    guard let error = error as? RemuxError else {
        Terminal.error("\(input.map { "\($0): " } ?? "")\(error)")
        return .ioError
    }
    let status = ExitStatus(error.code)
    let message = cliMessage(error, about: files.isEmpty ? [input, output].compactMap { $0 } : files,
                             salvaging: salvaging)
    if json {
        Terminal.write(errorJSON(input: input, output: output, code: error.code.rawValue, status: status,
                                 message: message, path: error.boxPath, offset: error.byteOffset,
                                 reason: error.parseError?.code.rawValue) + "\n", to: descriptor)
    } else {
        Terminal.error(message)
    }
    return status
}

/// How one input of a run ended.
enum Outcome: Sendable {
    case extracted
    case skipped
    case failed(ExitStatus)
}

func extract(_ job: Arguments.Job, arguments: Arguments) -> Outcome {
    let toStdout = job.output == Arguments.standardStream
    let fromStdin = job.input == Arguments.standardStream
    let shownInput = fromStdin ? "standard input" : job.input
    let shownOutput = toStdout ? "standard output" : job.output
    // With the M4A on stdout, everything said goes to stderr.
    let reportTo: Int32 = toStdout ? 2 : 1
    if arguments.skipExisting && !toStdout {
        var status = stat()
        if lstat(job.output, &status) == 0 {
            if !arguments.quiet && !arguments.json {
                Terminal.write("skipped \(job.input): \(job.output) exists\n", to: reportTo)
            }
            return .skipped
        }
    }
    let track: TrackChoice = arguments.trackID.map { .trackID($0) }
        ?? arguments.audioTrack.map { .audioIndex($0) } ?? .firstAudio
    var options = ExtractionOptions(track: track, overwrite: arguments.overwrite, salvage: arguments.salvage,
                                    keepMetadata: arguments.keepMetadata)
    options.tags = arguments.tagChanges
    // A batch worker's text is held back (Batch.swift): the batch draws one bar of its own.
    let bar = !arguments.quiet && !arguments.json && Terminal.stderrIsTerminal && Captured.current == nil
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
        if let cut = try CutCommand.extract(input, job: job, options: options, arguments: arguments) {
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
        if arguments.json {
            var members: [(String, JSON)] = [
                ("input", .string(job.input)), ("output", .string(job.output)), ("status", .string("ok")),
                ("codec", .string(result.codec)), ("sample_rate", .int(result.sampleRate)),
                ("channels", .int(result.channelCount)), ("duration", .double(result.duration)),
                ("packets", .int(result.sampleCount)), ("bytes", .int(Int(clamping: result.bytesWritten))),
                ("seconds", .double(seconds)), ("peak_memory_kib", .optional(System.peakMemoryKiB())),
                ("notes", .array(result.notes.map(JSON.string))),
                ("warnings", .array(result.warnings.map(JSON.string))),
            ]
            if let salvage = result.salvage {
                members.append(("salvaged", .object([("file_length", .int(Int(clamping: salvage.fileLength))),
                                                     ("cut_box_offset", .int(Int(clamping: salvage.cutBoxOffset))),
                                                     ("recovered_seconds", .double(salvage.recoveredSeconds))])))
            }
            Terminal.write(JSON.object(members).compactText + "\n", to: reportTo)
            return .extracted
        }
        if !arguments.quiet {
            for note in result.notes { Terminal.warning("\(shownInput): \(note)") }
        }
        // Said even with --quiet: they are not progress, the output differs from the input.
        for warning in result.warnings { Terminal.warning("\(shownInput): \(warning)") }
        if let salvage = result.salvage {
            Terminal.warning("\(shownInput) is truncated at byte \(salvage.fileLength) (in the box at byte "
                             + "\(salvage.cutBoxOffset)); recovered "
                             + "\(formatted(salvage.recoveredSeconds, digits: 3)) s of audio")
        }
        if !arguments.quiet {
            Terminal.write("wrote \(toStdout ? shownOutput : result.outputPath): \(result.codec), "
                           + "\(result.sampleRate) Hz, \(result.channelCount) ch, "
                           + "\(formatted(result.duration, digits: 3)) s, \(result.sampleCount) packets, "
                           + "\(result.bytesWritten) bytes\n", to: reportTo)
        }
        return .extracted
    } catch {
        bar?.finish()
        return .failed(report(error, input: job.input, output: job.output, json: arguments.json,
                              about: [shownInput, shownOutput], salvaging: arguments.salvage, jsonTo: reportTo))
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

func run() -> ExitStatus {
    let commandLine = Array(CommandLine.arguments.dropFirst())
    var parsed: Arguments
    do {
        parsed = try Arguments(commandLine)
    } catch let error as Arguments.UsageError {
        if commandLine.contains("--json") {
            Terminal.line(errorJSON(input: nil, output: nil, code: "usage", status: .usage, message: error.message))
        } else {
            Terminal.error(error.message)
        }
        return .usage
    } catch {
        return .usage
    }
    installSignalHandlers()
    if !parsed.tagSets.isEmpty || !parsed.covers.isEmpty || parsed.chaptersFrom != nil {
        do {
            parsed.tagChanges = try TagCommand.changes(parsed)
        } catch {
            return report(error, input: nil, output: nil, json: parsed.json)
        }
    }
    let arguments = parsed
    switch arguments.mode {
    case .help:
        Terminal.line(usage)
        return .success
    case .version:
        Terminal.line("extract-audio \(version)")
        return .success
    case .probe(let inputs):
        if arguments.packets { return Probe.packets(inputs[0], trackID: arguments.trackID, json: arguments.json) }
        return Probe.run(inputs, json: arguments.json)
    case .mux(let video, let music, let output):
        return runMux(video: video, music: music, output: output, arguments: arguments)
    case .remux(let input, let output):
        return RemuxCommand.run(input: input, output: output, arguments: arguments)
    case .tag(let files):
        return TagCommand.run(files, arguments: arguments)
    case .concat(let inputs, let output):
        return ConcatCommand.run(inputs: inputs, output: output, arguments: arguments)
    case .extract(let jobs):
        if let job = jobs.first, job.output == Arguments.standardStream, isatty(1) != 0 {
            Terminal.error("standard output is a terminal: redirect it to a file or a pipe to receive the M4A")
            return .usage
        }
        if let directory = arguments.outputDirectory {
            do {
                try makeDirectory(directory)
            } catch {
                return report(error, input: nil, output: directory, json: arguments.json, about: [directory])
            }
        }
        var firstFailure: ExitStatus?
        var failed = 0
        var skipped = 0
        let showsBar = !arguments.quiet && !arguments.json && Terminal.stderrIsTerminal
        let outcomes = Batch.run(count: jobs.count, workers: arguments.workers ?? Batch.defaultWorkers,
                                 showsProgress: showsBar) { index in extract(jobs[index], arguments: arguments) }
        for outcome in outcomes {
            switch outcome {
            case .extracted: break
            case .skipped: skipped += 1
            case .failed(let status):
                failed += 1
                firstFailure = firstFailure ?? status
            }
        }
        if jobs.count > 1 && !arguments.quiet && !arguments.json {
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
}

/// `mux`: the progress bar on a terminal, the "wrote" line or --json object, and on stderr
/// what of the video was not carried over.
func runMux(video: String, music: [String], output: String, arguments: Arguments) -> ExitStatus {
    var options = MuxOptions(musicOffset: arguments.musicOffset, keepOriginalAudio: arguments.keepOriginalAudio,
                             loop: arguments.loop, exactSeams: arguments.exactSeams,
                             keepMetadata: arguments.keepMetadata, overwrite: arguments.overwrite)
    options.tags = arguments.tagChanges
    let bar = !arguments.quiet && !arguments.json && Terminal.stderrIsTerminal ? ProgressBar(label: video) : nil
    do {
        let result = try BackgroundMusic.mux(video: video, music: music, to: output, options: options,
                                             progress: bar.map { bar in
                                                 { bar.update(ExtractionProgress(bytesDone: $0.sampleBytesDone,
                                                                                 bytesTotal: $0.sampleBytesTotal,
                                                                                 samplesDone: 0, samplesTotal: 0)) }
                                             })
        bar?.finish()
        if !arguments.quiet {
            // A note says what was dropped ("the video's own audio, …"), or is a sanitizer's
            // line that already starts with the word.
            for note in result.dropped {
                Terminal.write("extract-audio: " + (note.hasPrefix("dropped ") ? "" : "dropped ") + note + "\n", to: 2)
            }
        }
        for warning in result.warnings { Terminal.warning("\(output): \(warning)") }
        if arguments.json {
            Terminal.line(muxJSON(result, video: video, output: output).compactText)
        } else if !arguments.quiet {
            Terminal.line("wrote \(output): \(result.videoTrackCount) video track(s), music from "
                          + describeClips(result.clips) + " for \(formatted(result.musicDuration, digits: 3)) s of "
                          + "\(formatted(result.videoDuration, digits: 3)) s, \(result.bytesWritten) bytes")
        }
        return .success
    } catch {
        bar?.finish()
        return report(error, input: video, output: output, json: arguments.json, about: [video] + music + [output])
    }
}

/// "song.m4a looped 12 times", "2 clips", "a.m4a (and b.m4a, not reached)".
func describeClips(_ clips: [MuxResult.ClipUse]) -> String {
    if clips.count == 1, let clip = clips.first {
        return clip.plays > 1 ? "\(clip.path) looped \(clip.plays) times" : clip.path
    }
    let looped = clips.contains { $0.plays > 1 }
    let unused = clips.filter { $0.plays == 0 }.count
    return "\(clips.count) clips" + (looped ? " looped (\(clips.map { String($0.plays) }.joined(separator: "/")) plays)" : "")
        + (unused > 0 ? ", \(unused) not reached before the video ends" : "")
}

/// The --json object of a mux: `input` is the video, `clips` the music files.
func muxJSON(_ result: MuxResult, video: String, output: String) -> JSON {
    JSON.object([
        ("input", .string(video)), ("output", .string(output)), ("status", .string("ok")),
        ("clips", .array(result.clips.map { .object([("path", .string($0.path)), ("plays", .int($0.plays))]) })),
        ("seams", .string(result.exactSeams ? "exact" : "packet")),
        ("largest_seam_error", .double(result.largestSeamError)),
        ("video_tracks", .int(result.videoTrackCount)),
        ("video_duration", .double(result.videoDuration)),
        ("music_duration", .double(result.musicDuration)),
        ("dropped", .array(result.dropped.map(JSON.string))),
        ("bytes", .int(Int(clamping: result.bytesWritten))),
        ("peak_memory_kib", .optional(System.peakMemoryKiB())),
    ])
}

exit(run().rawValue)
