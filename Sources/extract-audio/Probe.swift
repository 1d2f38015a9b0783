// `probe INPUT…` (or `--list INPUT…`): the track table of each input; `probe --packets`
// (ProbePackets.swift): every sample.
import AudioRemux
import ISOBMFF

struct ProbeCommand: CommandRunner {
    static let list = Option("--list", short: "-l", "the same as probe: extract-audio --list INPUT…")
    static let packets = Option("--packets", "list every sample of every track in decode order")
    static let trackID = Option("--track-id", .trackID, "with --packets: only the track with this ID")

    static let options: [Option] = [.json, list, packets, trackID]
    static let synopsis = ["probe [--json] INPUT…       (or: extract-audio --list INPUT…)",
                           "probe --packets [--track-id ID] [--json] INPUT"]
    static let summary = "describe each input and its tracks, or list every packet (--packets)"
    static let details = """
        probe INPUT... describes each INPUT and its tracks (codec, sample rate, channels, duration
        and start time, counted in a fragmented file on one timeline from its first track's start,
        samples, bitrate, language, enabled, rotation, whether extraction would work); with --json
        as one JSON object per input. --list INPUT... is the same.

        probe --packets INPUT lists every sample of every track (or of --track-id ID) in decode
        order, one line each (one JSON object each with --json): track_id, index, dts, pts,
        duration (in the track's timescale, no edit list applied), size, offset, sync; the
        numbers ffprobe -ignore_editlist 1 -show_packets prints. Where a video sample's
        bitstream disagrees with its container sync mark, bitstream_sync says what it says.
        A damaged track is named on stderr (with --json, as one object: track_id, problem,
        reason) and the others listed; a file cut short is listed as a player reads it, up to
        the first sample of any track that the end of the file cuts off (ffprobe's packets
        less its partial last one). Exit 65 only when nothing can be listed.
        """

    var inputs: [String]
    var json: Bool
    var packets: Bool
    var trackID: UInt32?

    init(_ line: ParsedLine) throws(UsageError) {
        inputs = line.operands
        json = line.has(.json)
        packets = line.has(Self.packets)
        trackID = line.trackIDs(Self.trackID).last
        guard !inputs.isEmpty else {
            throw UsageError(message: "probe takes one or more input files")
        }
        try Operand.refuseStandardStreams(inputs, "probe reads files, not standard input ('-')")
        if trackID != nil && !packets {
            throw UsageError(message: "probe takes --track-id only with --packets")
        }
        if packets && inputs.count > 1 {
            throw UsageError(message: "probe --packets takes one input file")
        }
    }

    func run() -> ExitStatus {
        packets ? Probe.packets(inputs[0], trackID: trackID, json: json) : Probe.run(inputs, json: json)
    }
}

/// `extract-audio probe`: the tracks of a file as an aligned table, or as JSON (the schema
/// is documented in docs/cli.md).
enum Probe {
    /// Probes each input in turn: a report per file (headed by its name when there are
    /// several), an error line for a file that cannot be read. The status is the first
    /// failure's.
    static func run(_ inputs: [String], json: Bool) -> ExitStatus {
        var firstFailure: ExitStatus?
        for (n, input) in inputs.enumerated() {
            do {
                let report = try AudioExtractor.probe(input)
                if json {
                    Terminal.line(Probe.json(report, path: input))
                } else {
                    if inputs.count > 1 { Terminal.line((n > 0 ? "\n" : "") + "file:       \(input)") }
                    Terminal.line(Probe.text(report))
                }
            } catch {
                let status = report(error, input: input, output: nil, json: json)
                firstFailure = firstFailure ?? status
            }
        }
        return firstFailure ?? .success
    }

    static func text(_ report: MovieReport) -> String {
        var lines: [String] = []
        let brands = report.compatibleBrands.map(\.description).joined(separator: ", ")
        lines.append("brands:     \(report.majorBrand?.description ?? "none (no ftyp)")"
                     + (brands.isEmpty ? "" : " (compatible: \(brands))"))
        lines.append("layout:     moov at byte \(report.movieBoxOffset) (\(report.movieBoxSize) bytes)"
                     + (report.isFragmented ? ", fragmented" : ""))
        lines.append("duration:   \(formatted(report.duration, digits: 3)) s"
                     + (report.startTime > 0 ? " (from \(formatted(report.startTime, digits: 3)) s on the fragments' clock)"
                        : ""))
        lines.append("")
        var rows = [["#", "ID", "KIND", "CODEC", "DURATION", "SAMPLES", "BITRATE", "LANG", "ENABLED", "DETAILS"]]
        for track in report.tracks {
            var details: [String] = []
            if let rate = track.sampleRate { details.append("\(rate) Hz") }
            if let channels = track.channelCount { details.append("\(channels) ch") }
            if let priming = track.primingSamples, priming > 0 { details.append("priming \(priming)") }
            if let width = track.width, let height = track.height { details.append("\(width)x\(height)") }
            if track.alternateGroup != 0 { details.append("group \(track.alternateGroup)") }
            if let rotation = track.rotation, rotation != 0 { details.append("rotated \(rotation)°") }
            if track.extractionProblem != nil {
                details.append(track.extractableWithSalvage ? "extracts only with --salvage" : "cannot be extracted")
            }
            rows.append([track.audioIndex.map { "a:\($0)" } ?? "", "\(track.trackID)", track.kind, track.codec,
                         formatted(track.duration, digits: 3) + " s", "\(track.sampleCount)",
                         track.bitrate > 0 ? "\(track.bitrate / 1000) kb/s" : "-", track.language ?? "-",
                         track.isEnabled ? "yes" : "no", details.joined(separator: ", ")])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            var line = zip(row, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        let problems = report.tracks.compactMap { track in
            track.extractionProblem.map { "  track \(track.trackID): \($0)" }
        }
        let warnings = report.tracks.flatMap { track in track.warnings.map { "  track \(track.trackID): \($0)" } }
        if !problems.isEmpty || !warnings.isEmpty {
            lines.append("")
            lines.append("problems:")
            lines += problems + warnings
        }
        if !report.metadata.isEmpty {
            lines.append("")
            lines.append("metadata:")
            for item in report.metadata {
                lines.append("  \(item.key.padding(to: 6))  " + (item.text ?? "(\(item.valueSize) bytes)"))
            }
        }
        if !report.chapters.isEmpty {
            lines.append("")
            lines.append("chapters:")
            for chapter in report.chapters {
                lines.append("  \(formatted(chapter.start, digits: 3).leftPadded(to: 10)) s  \(chapter.title)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ report: MovieReport, path: String) -> String {
        let tracks: [JSON] = report.tracks.map { track in
            var members: [(String, JSON)] = [
                ("id", .int(Int(track.trackID))), ("kind", .string(track.kind)),
                ("handler", .string(track.handlerType.description)), ("format", .string(track.format)),
                ("codec", .string(track.codec)), ("duration", .double(track.duration)),
                ("start_time", .optional(track.startTime)),
                ("sample_count", .int(track.sampleCount)), ("bitrate", .int(track.bitrate)),
                ("language", .optional(track.language)), ("enabled", .bool(track.isEnabled)),
                ("alternate_group", .int(track.alternateGroup)),
                ("edit_list", .array(track.editList.map { edit in
                    .object([("segment_duration", .int(Int(clamping: edit.segmentDuration))),
                             ("media_time", .int(Int(edit.mediaTime)))])
                })),
            ]
            if track.kind == "audio" {
                members += [("audio_index", .optional(track.audioIndex)), ("sample_rate", .optional(track.sampleRate)),
                            ("channels", .optional(track.channelCount)),
                            ("priming_samples", .optional(track.primingSamples)),
                            ("extractable", .bool(track.extractionProblem == nil)),
                            ("extractable_with_salvage", .bool(track.extractionProblem == nil
                                                               || track.extractableWithSalvage)),
                            ("problem", .optional(track.extractionProblem)),
                            ("warnings", .array(track.warnings.map { .string($0) }))]
            }
            if track.kind == "video" {
                members += [("width", .optional(track.width)), ("height", .optional(track.height)),
                            ("rotation", .optional(track.rotation))]
            }
            return .object(members)
        }
        let brands: JSON = .object([
            ("major", .optional(report.majorBrand?.description)),
            ("minor", .optional(report.minorVersion.map { Int($0) })),
            ("compatible", .array(report.compatibleBrands.map { .string($0.description) })),
        ])
        return JSON.object([
            ("file", .string(path)), ("brands", brands), ("fragmented", .bool(report.isFragmented)),
            ("moov", .object([("offset", .int(Int(clamping: report.movieBoxOffset))),
                              ("size", .int(Int(clamping: report.movieBoxSize)))])),
            ("duration", .double(report.duration)), ("start_time", .double(report.startTime)),
            ("tracks", .array(tracks)),
            ("chapters", .array(report.chapters.map {
                .object([("title", .string($0.title)), ("start", .double($0.start))])
            })),
            ("metadata", .array(report.metadata.map {
                .object([("key", .string($0.key)), ("text", .optional($0.text)), ("size", .int($0.valueSize))])
            })),
        ]).compactText
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}

extension String {
    func padding(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }
}
