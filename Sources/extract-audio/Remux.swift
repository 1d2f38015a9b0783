// `remux IN OUT.mp4`, and the range options (--from/--to/--duration) it shares with extraction.
import AudioRemux
import ISOBMFF

/// `--from`, `--to`, `--duration`: a cut's range as given.
struct CutRangeOptions: Equatable, Sendable {
    var from: CutTime?
    var to: CutTime?
    var duration: CutTime?

    init(_ line: ParsedLine) {
        from = line.time(.from)
        to = line.time(.to)
        duration = line.time(.duration)
    }

    /// The range asked for, nil when none was: `--to` or `--duration` after `--from` (0 when
    /// not given). An empty or reversed range is a usage error.
    func range() throws(UsageError) -> CutRange? {
        guard from != nil || to != nil || duration != nil else { return nil }
        let start = from ?? CutTime(nanoseconds: 0)
        if to != nil && duration != nil {
            throw UsageError(message: "use --to or --duration, not both")
        }
        var end = to
        if let duration {
            guard duration.nanoseconds > 0 else {
                throw UsageError(message: "--duration 0 is an empty range: nothing to write")
            }
            let (sum, overflow) = start.nanoseconds.addingReportingOverflow(duration.nanoseconds)
            end = CutTime(nanoseconds: overflow ? UInt64.max : sum)
        }
        if let end, end <= start {
            throw UsageError(message: end == start
                             ? "--from and --to are both \(start) s: the range is empty"
                             : "--from \(start) s is after --to \(end) s: the range is empty")
        }
        return CutRange(from: start, to: end)
    }
}

struct RemuxCommand: CommandRunner {
    static let dropAudio = Option("--drop-audio", "leave out every audio track")
    static let dropVideo = Option("--drop-video", "leave out every video track")
    static let trackID = Option("--track-id", .trackID, "keep the track with this ID (repeatable; the others are "
                                + "left out)")
    static let fragment = Option("--fragment", .seconds("SECONDS", expected: "a fragment duration in seconds (above "
                                 + "0, at most 3600)", accepting: { $0 > 0 && $0 <= 3600 }),
                                 "write a fragmented MP4 of fragments of about SECONDS")

    static let options: [Option] = [
        .from, .to, .duration, dropAudio, dropVideo, trackID, fragment, .overwrite, .quiet, .json, .noMetadata, .set,
        .cover, .chaptersFrom,
    ]
    static let synopsis = [
        "remux IN OUT.mp4 [--from T] [--to T | --duration D] [--drop-audio] [--drop-video]",
        "      [--track-id ID]… [--fragment SECONDS] [--no-metadata] [--set K=V]… [--cover IMG]…",
        "      [--chapters-from FILE]",
    ]
    static let summary = "copy tracks into a new MP4 or MOV, whole, cut to a range, or fragmented"
    static let details = """
        remux copies every track (or those kept by --track-id, --drop-audio, --drop-video) into
        a new MP4, or a MOV when OUTPUT is named .mov (an .mp4 cannot carry QuickTime timecode
        or PCM in twos/sowt: those tracks are dropped with a warning), without re-encoding.
        --from T --to T (or --duration D) keep [T, T): the video is copied from the sync sample
        at or before --from and every track's edit list presents exactly the range (times as
        seconds or [[h:]m:]s[.frac]). --fragment SECONDS writes a fragmented MP4 (fMP4) with
        fragments of about SECONDS starting at sync samples. Metadata is kept; --no-metadata drops
        the tags and the chapter tracks.
        """

    var input: String
    var output: String
    var range: CutRangeOptions
    var dropAudio: Bool
    var dropVideo: Bool
    var trackIDs: [UInt32]
    var fragmentSeconds: Double?

    var common: CommonOptions

    init(_ line: ParsedLine) throws(UsageError) {
        common = CommonOptions(line)
        range = CutRangeOptions(line)
        dropAudio = line.has(Self.dropAudio)
        dropVideo = line.has(Self.dropVideo)
        trackIDs = line.trackIDs(Self.trackID)
        fragmentSeconds = line.seconds(Self.fragment)
        let operands = line.operands
        guard operands.count == 2 else {
            throw UsageError(message: "remux takes an input and an output: extract-audio remux IN OUT.mp4 "
                             + "[--from T] [--to T] (see --help)")
        }
        try Operand.refuseStandardStreams(operands, "remux reads and writes files, not standard input or output ('-')")
        try Operand.checkName(of: operands[1], "remux writes an MP4 or a MOV: name it .mp4 or .mov")
        if dropAudio && dropVideo && trackIDs.isEmpty {
            throw UsageError(message: "--drop-audio and --drop-video together leave no audio or video")
        }
        _ = try range.range()
        (input, output) = (operands[0], operands[1])
    }

    /// Runs `remux`: one line on success (or a JSON object), one line on failure.
    func run() -> ExitStatus {
        var options = RemuxOptions()
        do {
            options.tags = try common.tags.checkedChanges(json: common.json)
        } catch {
            return error
        }
        options.keepMetadata = common.keepMetadata
        do {
            options.range = try range.range()
        } catch {
            Terminal.error(error.message)
            return .usage
        }
        options.dropAudio = dropAudio
        options.dropVideo = dropVideo
        options.trackIDs = trackIDs
        options.fragmentSeconds = fragmentSeconds
        options.overwrite = common.overwrite
        let start = Terminal.now()
        do {
            let result = try Remux.run(from: input, to: output, options: options)
            let seconds = Terminal.now() - start
            if common.json {
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
                    ("dropped_tracks", JSON.droppedTracks(result.droppedTracks)),
                ]).compactText)
                return .success
            }
            if !common.quiet {
                for note in result.notes { Terminal.warning("\(input): \(note)") }
            }
            for warning in result.warnings { Terminal.warning("\(input): \(warning)") }
            if !common.quiet {
                let list = result.tracks.map { "\($0.format) (\($0.sampleCount) packets)" }.joined(separator: ", ")
                Terminal.line("wrote \(output): \(result.tracks.count) track(s) \(list), "
                              + "\(formatted(result.duration, digits: 3)) s, \(result.bytesWritten) bytes")
            }
            return .success
        } catch {
            return report(error, input: input, output: output, json: common.json, about: [input, output])
        }
    }
}
