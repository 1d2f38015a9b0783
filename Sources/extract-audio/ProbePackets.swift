import AudioRemux
import ISOBMFF

extension Probe {
    /// `probe --packets`: every sample of every track (or of track `trackID`) in decode
    /// order, through the public ``MovieReader``; one line, or one JSON object, per sample.
    ///
    /// The numbers are those of `ffprobe -ignore_editlist 1 -show_packets`: times in the
    /// track's timescale with no edit list applied, `pts` = decode time + composition offset.
    /// Where a video sample's bitstream (``KeyFrameProbe``) disagrees with the container's
    /// sync mark, the line also carries `bitstream_sync` (the container lies: a cut starts
    /// further back).
    /// One rule of FFmpeg's (libavformat/mov.c, `mov_update_dts_shift`) is followed so the
    /// numbers agree: when a regular track's `ctts` holds negative offsets, FFmpeg moves
    /// every `dts` earlier by the largest of them (ignoring the last two `ctts` entries, as
    /// it does) so that no `dts` exceeds its `pts`; `pts` stays as the file says.
    static func packets(_ input: String, trackID: UInt32?, json: Bool) -> ExitStatus {
        do {
            let file = try InputFile(path: input)
            let reader: MovieReader<InputFile>
            do {
                reader = try MovieReader(reading: file)
            } catch let error as ISOBMFFError {
                return malformed(error, input: input, json: json)
            }
            if let trackID {
                guard reader.track(id: trackID) != nil else {
                    let ids = reader.tracks.map { String($0.id) }.joined(separator: ", ")
                    return report(RemuxError(.noAudioTrack, "\(input) has no track with ID \(trackID) (its tracks: "
                                             + "\(ids.isEmpty ? "none" : ids))"), input: input, output: nil, json: json)
                }
            }
            // Every chosen track is checked before anything is printed. One damaged track
            // does not hide the others: a truncated one lists its whole samples, a broken
            // one none, each after one problem line; only when nothing at all can be listed
            // does the command fail (with nothing on standard output but the error).
            for warning in reader.warnings { Terminal.warning("\(input): \(warning)") }
            // Every track is indexed, the chosen ones printed: a file cut short is read across
            // all of them.
            // FFmpeg's decode-time shift is computed once per track (it parses the `ctts` again), for
            // the listing and the read order alike; nil where the track's tables did not read.
            var indexed: [(track: MediaTrack, samples: SampleIndex?, shift: Int64?, problem: ISOBMFFError?)] = []
            for track in reader.tracks {
                do {
                    let (samples, truncation) = try reader.wholeSamples(of: track)
                    indexed.append((track, samples, reader.ffmpegDecodeTimeShift(of: track, samples: samples),
                                    truncation))
                } catch let error as ISOBMFFError {
                    // No readable sample description, tables intact: listed as ffprobe lists
                    // them, codec unknown (issue 32).
                    let samples = track.problem == nil ? nil : try? reader.samplesWithoutDescriptions(of: track)
                    indexed.append((track, samples, nil, error))
                }
            }
            let chosen = indexed.filter { trackID == nil || $0.track.id == trackID }
            if chosen.allSatisfy({ $0.samples?.isEmpty ?? true }),
               let problem = chosen.lazy.compactMap(\.problem).first {
                return malformed(problem, input: input, json: json)
            }
            // A file cut short is listed as a player reads it: up to the first sample of
            // which no byte is there, for every track at once (issue 32).
            let listed = reader.samplesReadBeforeTheCut(indexed.map {
                ($0.track, $0.samples, $0.problem?.code == .endOfFile)
            }, decodeTimeShifts: indexed.map(\.shift))
            var output = OutputBuffer()
            var buffer: [UInt8] = []
            for ((track, samples, shift, problem), count) in zip(indexed, listed)
            where trackID == nil || track.id == trackID {
                let id = Int(track.id)
                if let problem {
                    let what = samples == nil ? "none of its samples is listed"
                        : problem.code == .endOfFile ? "its samples before the cut are listed"
                        : "its samples are listed, its codec unknown"
                    Terminal.warning("\(input): track \(id): \(what): \(problem)")
                    if json {
                        output.append(JSON.object([("track_id", .int(id)), ("problem", .string(problem.code.rawValue)),
                                                   ("reason", .string(problem.description))]).compactText + "\n")
                    }
                }
                guard let samples else { continue }
                if count < samples.count {
                    Terminal.warning("\(input): track \(id): its first \(count) of \(samples.count) whole samples are "
                                     + "listed: a player reading the file in time order stops before the others, at the "
                                     + "first sample of any track that the end of the file (byte "
                                     + "\(reader.movie.fileLength)) cuts off")
                }
                let shift = shift ?? 0
                for (index, sample) in samples.prefix(count).enumerated() {
                    // Decode times of a checked table stay below 2^64; real ones below 2^63.
                    let dts = Int64(clamping: sample.decodeTime) &- shift
                    let pts = sample.presentationTime
                    // `sync` is the container's mark (what ffprobe compares): stss, or QuickTime's
                    // stps (partial sync: an open GOP's key frame), which ffprobe marks too;
                    // where the video bitstream says otherwise, `bitstream_sync` says what it says.
                    let sync = sample.isSync || samples.isPartialSync(index)
                    var disagreement: Bool?
                    if track.kind == .video,
                       let key = try reader.bitstreamKeyFrame(sample, of: track, buffer: &buffer), key != sync {
                        disagreement = key
                    }
                    if json {
                        output.append("{\"track_id\": \(id), \"index\": \(index), \"dts\": \(dts), \"pts\": \(pts), "
                                      + "\"duration\": \(sample.duration), \"size\": \(sample.size), "
                                      + "\"offset\": \(sample.offset), \"sync\": \(sync)"
                                      + (disagreement.map { ", \"bitstream_sync\": \($0)" } ?? "") + "}\n")
                    } else {
                        output.append("track_id=\(id) index=\(index) dts=\(dts) pts=\(pts) duration=\(sample.duration) "
                                      + "size=\(sample.size) offset=\(sample.offset) sync=\(sync ? 1 : 0)"
                                      + (disagreement.map { " bitstream_sync=\($0 ? 1 : 0)" } ?? "") + "\n")
                    }
                }
            }
            output.flush()
            return .success
        } catch {
            return report(error, input: input, output: nil, json: json)
        }
    }

    static func malformed(_ error: ISOBMFFError, input: String, json: Bool) -> ExitStatus {
        report(RemuxError(.invalidInput, error.description), input: input, output: nil, json: json)
    }

    /// Collects output lines and writes them 64 KiB at a time: a million samples are a
    /// million lines.
    struct OutputBuffer {
        var text = ""

        mutating func append(_ line: String) {
            text += line
            if text.utf8.count >= 1 << 16 { flush() }
        }

        mutating func flush() {
            guard !text.isEmpty else { return }
            Terminal.write(text, to: 1)
            text = ""
        }
    }
}
