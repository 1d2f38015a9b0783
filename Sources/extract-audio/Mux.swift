// `mux VIDEO --audio MUSIC… OUTPUT`: music under a video, by stream copy.
import AudioRemux

/// `mux`: the progress bar on a terminal, the "wrote" line or --json object, and on stderr
/// what of the video was not carried over.
struct MuxCommand: CommandRunner {
    static let audio = Option("--audio", short: "-a", .text("MUSIC"), "a music clip (repeatable: played back to "
                              + "back)")
    static let offset = Option("--offset", .seconds("S", expected: "seconds (0 or more)", accepting: { $0 >= 0 }),
                               "start the music S seconds into the video (default 0)")
    static let loop = Option("--loop", "repeat the clips until the video ends")
    static let exactSeams = Option("--exact-seams", "join the clips to the sample, one edit per clip "
                                   + "(AVFoundation/QuickTime)")
    static let keepOriginalAudio = Option("--keep-original-audio", "keep the video's own audio as a second, "
                                          + "disabled track")

    static let options: [Option] = [
        audio, offset, loop, exactSeams, keepOriginalAudio, .noMetadata, .overwrite, .quiet, .json, .set, .cover,
        .chaptersFrom,
    ]
    /// The options whose "does not apply" message says "(it goes with mux)".
    static let hinted: Set<String> = ["--audio", "--offset", "--loop", "--keep-original-audio"]
    static let synopsis = [
        "mux VIDEO --audio MUSIC… [--offset S] [--loop] [--exact-seams]",
        "    [--keep-original-audio] [--no-metadata] [--set K=V]… [--cover IMG]…",
        "    [--chapters-from FILE] OUTPUT.mp4",
    ]
    static let summary = "put music under a video, by stream copy"
    static let details = """
        mux puts music under a video, also by stream copy: the video track is copied as it
        is, and one audio track holds the --audio clips back to back from the start (or from
        --offset S seconds), cut to the sample where the video ends. The clips are joined at
        packet level under one edit, which plays in every player: the clips' priming is
        skipped by whole packets (the last priming packet stays, as the decoder's pre-roll) and
        each seam lands within half an audio frame of the exact point, never drifting.
        --exact-seams joins them to the sample with one edit per clip instead, for players that
        honour multi-entry edit lists (AVFoundation/QuickTime); others may stop or gap. --loop
        repeats the clips until the video ends; --keep-original-audio keeps the video's own
        audio as a second, disabled track (else it is dropped, as stderr says). The video's
        tags, cover art and metadata keys (make, model, location, creation date) are kept
        unless --no-metadata. The clips must share codec, sample rate, channels and
        configuration.
        """

    var video: String
    var music: [String]
    var output: String
    var musicOffset: Double
    var loop: Bool
    var exactSeams: Bool
    var keepOriginalAudio: Bool

    var common: CommonOptions

    init(_ line: ParsedLine) throws(UsageError) {
        common = CommonOptions(line)
        music = line.texts(Self.audio)
        musicOffset = line.seconds(Self.offset) ?? 0
        loop = line.has(Self.loop)
        exactSeams = line.has(Self.exactSeams)
        keepOriginalAudio = line.has(Self.keepOriginalAudio)
        let operands = line.operands
        guard operands.count == 2 else {
            throw UsageError(message: "mux takes a video and an output: extract-audio mux VIDEO --audio MUSIC.m4a "
                             + "OUTPUT.mp4")
        }
        guard !music.isEmpty else {
            throw UsageError(message: "mux needs at least one --audio MUSIC file")
        }
        try Operand.refuseStandardStreams(operands + music, "mux reads and writes files, not standard input or "
                                          + "output ('-')")
        try Operand.checkName(of: operands[1], "mux writes an MP4: name it .mp4")
        (video, output) = (operands[0], operands[1])
    }

    func run() -> ExitStatus {
        var options = MuxOptions(musicOffset: musicOffset, keepOriginalAudio: keepOriginalAudio,
                                 loop: loop, exactSeams: exactSeams,
                                 keepMetadata: common.keepMetadata, overwrite: common.overwrite)
        do {
            options.tags = try common.tags.checkedChanges(json: common.json)
        } catch {
            return error
        }
        let bar = common.printsText && Terminal.stderrIsTerminal ? ProgressBar(label: video) : nil
        do {
            let result = try BackgroundMusic.mux(video: video, music: music, to: output, options: options,
                                                 progress: bar.map { bar in { bar.update($0) } })
            bar?.finish()
            if !common.quiet {
                // A note says what was dropped ("the video's own audio, …"), or is a sanitizer's
                // line that already starts with the word.
                for note in result.dropped {
                    Terminal.write("extract-audio: " + (note.hasPrefix("dropped ") ? "" : "dropped ") + note + "\n",
                                   to: 2)
                }
            }
            for warning in result.warnings { Terminal.warning("\(output): \(warning)") }
            if common.json {
                Terminal.line(MuxCommand.json(result, video: video, output: output).compactText)
            } else if !common.quiet {
                Terminal.line("wrote \(output): \(result.videoTrackCount) video track(s), music from "
                              + MuxCommand.describe(result.clips)
                              + " for \(formatted(result.musicDuration, digits: 3)) s of "
                              + "\(formatted(result.videoDuration, digits: 3)) s, \(result.bytesWritten) bytes")
            }
            return .success
        } catch {
            bar?.finish()
            return report(error, input: video, output: output, json: common.json, about: [video] + music + [output])
        }
    }

    /// "song.m4a looped 12 times", "2 clips", "a.m4a (and b.m4a, not reached)".
    static func describe(_ clips: [MuxResult.ClipUse]) -> String {
        if clips.count == 1, let clip = clips.first {
            return clip.plays > 1 ? "\(clip.path) looped \(clip.plays) times" : clip.path
        }
        let looped = clips.contains { $0.plays > 1 }
        let unused = clips.filter { $0.plays == 0 }.count
        let plays = clips.map { String($0.plays) }.joined(separator: "/")
        return "\(clips.count) clips" + (looped ? " looped (\(plays) plays)" : "")
            + (unused > 0 ? ", \(unused) not reached before the video ends" : "")
    }

    /// The --json object of a mux: `input` is the video, `clips` the music files.
    static func json(_ result: MuxResult, video: String, output: String) -> JSON {
        JSON.object([
            ("input", .string(video)), ("output", .string(output)), ("status", .string("ok")),
            ("clips", .array(result.clips.map { .object([("path", .string($0.path)), ("plays", .int($0.plays))]) })),
            ("seams", .string(result.exactSeams ? "exact" : "packet")),
            ("largest_seam_error", .double(result.largestSeamError)),
            ("video_tracks", .int(result.videoTrackCount)),
            ("video_duration", .double(result.videoDuration)),
            ("music_duration", .double(result.musicDuration)),
            ("dropped", .array(result.dropped.map(JSON.string))),
            ("warnings", .array(result.warnings.map(JSON.string))),
            ("dropped_tracks", JSON.droppedTracks(result.droppedTracks)),
            ("bytes", .int(Int(clamping: result.bytesWritten))),
            ("peak_memory_kib", .optional(System.peakMemoryKiB())),
        ])
    }
}
