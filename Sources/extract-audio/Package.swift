// `package IN OUTDIR`: HLS and DASH by stream copy (AudioRemux's Packager).
import AudioRemux
import ISOBMFF

struct PackageCommand: CommandRunner {
    static let segmentDuration = Option("--segment-duration", .seconds("S", expected: "a segment duration in seconds "
                                        + "(above 0, at most 3600)", accepting: { $0 > 0 && $0 <= 3600 }),
                                        "cut segments at the first sync sample at or after each multiple of S "
                                        + "(default 6)")
    static let iFrames = Option("--iframes", "also write an I-frame playlist per video track (EXT-X-I-FRAMES-ONLY)")
    static let singleFile = Option("--single-file", "one file per track (init, sidx, segments) addressed by byte "
                                   + "ranges, instead of a file per segment")

    static let options: [Option] = [segmentDuration, singleFile, iFrames, .overwrite, .quiet, .json]
    static let synopsis = ["package IN OUTDIR [--segment-duration S] [--single-file] [--iframes]"]
    static let summary = "package a movie for HLS and DASH by stream copy (CMAF segments, playlists)"
    static let details = """
        package writes OUTDIR/master.m3u8 (HLS), OUTDIR/manifest.mpd (DASH) and, for every audio
        and video track, an init segment (its edit list kept exactly), CMAF media segments
        (styp/moof/mdat, tfdt continuous) and a media playlist, without re-encoding. Video segments
        start at the first sync sample at or after each multiple of --segment-duration; audio is
        cut within one frame of the video. CODECS come from the sample entries, BANDWIDTH is the
        measured peak. OUTDIR is written beside its destination and renamed into place: on
        failure nothing is left. --overwrite replaces only a folder package wrote (it holds
        master.m3u8 and regular files only). --single-file writes one file per track instead
        (its init segment, a sidx, the same segments), with EXT-X-BYTERANGE and DASH SegmentBase.
        An encrypted track or a video track that does not
        start with a sync sample is refused (status 69).
        """

    var input: String
    var output: String
    var segmentSeconds: Double
    var iFrames: Bool
    var singleFile: Bool
    var common: CommonOptions

    init(_ line: ParsedLine) throws(UsageError) {
        common = CommonOptions(line)
        segmentSeconds = line.seconds(Self.segmentDuration) ?? 6
        iFrames = line.has(Self.iFrames)
        singleFile = line.has(Self.singleFile)
        let operands = line.operands
        guard operands.count == 2 else {
            throw UsageError(message: "package takes an input and an output folder: extract-audio package IN OUTDIR "
                             + "(see --help)")
        }
        try Operand.refuseStandardStreams(operands, "package reads a file and writes a folder, not standard input or "
                                          + "output ('-')")
        (input, output) = (operands[0], operands[1])
    }

    func run() -> ExitStatus {
        var options = PackageOptions()
        options.segmentSeconds = segmentSeconds
        options.iFramePlaylists = iFrames
        options.singleFile = singleFile
        options.overwrite = common.overwrite
        let bar = common.printsText && Terminal.stderrIsTerminal ? ProgressBar(label: output) : nil
        let start = Terminal.now()
        do {
            let result = try Packager.run(from: input, to: output, options: options, progress: bar.map { bar in { bar.update($0) } })
            bar?.finish()
            for warning in result.warnings { Terminal.warning("\(input): \(warning)") }
            if common.json {
                let tracks = result.tracks.map { track in
                    JSON.object([("input_track_id", .int(Int(track.inputID))), ("kind", .string(track.kind)),
                                 ("codecs", .string(track.codecs)), ("segments", .int(track.segmentCount)),
                                 ("packets", .int(track.sampleCount)), ("duration", .double(track.seconds)),
                                 ("peak_bandwidth", .int(Int(clamping: track.peakBandwidth))),
                                 ("average_bandwidth", .int(Int(clamping: track.averageBandwidth)))])
                }
                Terminal.line(JSON.object([
                    ("input", .string(input)), ("output", .string(result.outputPath)), ("status", .string("ok")),
                    ("target_duration", .int(result.targetDuration)), ("tracks", .array(tracks)),
                    ("files", .int(result.fileCount)), ("bytes", .int(Int(clamping: result.bytesWritten))),
                    ("seconds", .double(Terminal.now() - start)),
                    ("warnings", .array(result.warnings.map(JSON.string))),
                    ("dropped_tracks", JSON.droppedTracks(result.droppedTracks)),
                ]).compactText)
            } else if !common.quiet {
                let list = result.tracks.map { "\($0.codecs) (\($0.segmentCount) segments)" }.joined(separator: ", ")
                Terminal.line("wrote \(result.outputPath): \(result.tracks.count) track(s) \(list), target duration "
                              + "\(result.targetDuration) s, \(result.fileCount) files, \(result.bytesWritten) bytes")
            }
            return .success
        } catch {
            bar?.finish()
            return report(error, input: input, output: output, json: common.json, about: [input, output])
        }
    }
}
