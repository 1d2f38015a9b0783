import ISOBMFF

/// Which audio track to extract.
public enum TrackChoice: Sendable, Equatable {
    /// The first track whose handler is `soun`, in file order (FFmpeg's `-map 0:a:0`).
    case firstAudio
    /// The N-th audio track, 0-based (FFmpeg's `-map 0:a:N`).
    case audioIndex(Int)
}

public struct ExtractionOptions: Sendable {
    public var track: TrackChoice
    /// Replace an existing destination (atomically). Off by default: an existing file is
    /// never touched.
    public var overwrite: Bool
    /// The size of the copy buffer; memory use does not grow with the file.
    public var bufferSize: Int

    public init(track: TrackChoice = .firstAudio, overwrite: Bool = false, bufferSize: Int = 4 << 20) {
        self.track = track
        self.overwrite = overwrite
        self.bufferSize = max(bufferSize, 64 << 10)
    }
}

/// What an extraction produced.
public struct ExtractionResult: Sendable, Equatable {
    public var outputPath: String
    /// The input track's ID (the output's track is always ID 1).
    public var inputTrackID: UInt32
    /// The RFC 6381 codec string, such as `mp4a.40.2`.
    public var codec: String
    public var sampleRate: Int
    public var channelCount: Int
    public var sampleCount: Int
    /// The media duration in seconds (`mdhd`).
    public var duration: Double
    /// The size of the output file.
    public var bytesWritten: UInt64
}

/// Extracts an audio track from an MP4/MOV into a new M4A by stream copy: the packets are
/// copied unchanged, with their timing, and only the audio bytes of the input are read.
public enum AudioExtractor {
    /// Writes the chosen audio track of `inputPath` to a new M4A at `outputPath`.
    ///
    /// The output is written beside `outputPath` under a temporary name, flushed to disk and
    /// then moved into place atomically; on any error nothing is left behind. Throws a
    /// ``RemuxError``.
    public static func extract(from inputPath: String, to outputPath: String,
                               options: ExtractionOptions = ExtractionOptions()) throws -> ExtractionResult {
        let input = try InputFile(path: inputPath)
        if let existing = FileIdentity(path: outputPath) {
            if existing == input.identity {
                throw RemuxError(.sameFile, "\(inputPath) and \(outputPath) are the same file")
            }
            if !options.overwrite {
                throw RemuxError(.destinationExists, "\(outputPath) already exists (use --overwrite to replace it)")
            }
        }
        let movie = try parse { try Movie(reading: input) }
        let (track, index) = try select(options.track, in: movie, path: inputPath)
        try checkSamplesAreInFile(track)
        let table: SampleTable
        do {
            table = try parse {
                try SampleTable(boxes: track.sampleTable(), fileLength: input.length, excluding: [movie.movieBoxRange])
            }
        } catch let error as RemuxError where error.parseError?.code == .invalidSampleTable {
            // Samples past the end of a file that ends inside a box: the file was cut short.
            guard let cut = movie.truncatedBox else { throw error }
            throw RemuxError(.truncatedInput, "\(inputPath) is truncated: it ends at byte \(input.length), inside "
                             + "the \(cut.type) box at byte \(cut.offset) that should run to byte "
                             + "\(cut.offset &+ cut.size); the audio is incomplete (\(error.message))",
                             parseError: error.parseError)
        }
        if table.sampleCount == 0 && movie.isFragmented {
            throw RemuxError(.unsupportedInput, "\(inputPath) is a fragmented MP4 (moof boxes): this version "
                             + "cannot extract from fragmented files yet")
        }

        // Each sample entry the track uses must be AAC; unused entries are dropped.
        var entries: [[UInt8]] = []
        var entryIndex: [UInt32: UInt32] = [:]
        var codec: AudioCodec?
        for run in table.boxes.sampleToChunk.entries where entryIndex[run.sampleDescriptionIndex] == nil {
            let original = track.sampleDescriptions.entries[Int(run.sampleDescriptionIndex) - 1]  // Validated.
            let parsed = try AudioCodec(entry: original, quickTimeLayout: movie.usesQuickTimeLayout)
            codec = codec ?? parsed
            entries.append(parsed.outputEntry(original: original))
            entryIndex[run.sampleDescriptionIndex] = UInt32(entries.count)
        }
        if codec == nil, let first = track.sampleDescriptions.entries.first {
            let parsed = try AudioCodec(entry: first, quickTimeLayout: movie.usesQuickTimeLayout)
            codec = parsed
            entries.append(parsed.outputEntry(original: first))
        }
        guard let codec else {
            throw RemuxError(.invalidInput, "\(track.path): the audio track has no sample description")
        }
        _ = index

        let plan = try OutputMovie(movie: movie, track: track, table: table, entries: entries,
                                   entryIndex: entryIndex, addAACRoll: true)
        let output = try OutputFile(destination: outputPath, overwrite: options.overwrite)
        do {
            try output.write(plan.fileType)
            try output.write(plan.movieBox)
            try output.write(plan.mediaDataHeader)
            try SampleCopier(input: input, output: output, bufferSize: options.bufferSize).copy(table)
            let expected = UInt64(plan.fileType.count + plan.movieBox.count + plan.mediaDataHeader.count)
                + plan.payloadSize
            guard output.position == expected else {
                throw RemuxError(.ioError, "wrote \(output.position) bytes where \(expected) were planned")
            }
            try output.publish(overwrite: options.overwrite)
        } catch {
            output.discard()
            throw error
        }
        return ExtractionResult(
            outputPath: outputPath, inputTrackID: track.trackID, codec: codec.codecString,
            sampleRate: codec.sampleRate, channelCount: codec.channelCount, sampleCount: table.sampleCount,
            duration: track.durationInSeconds, bytesWritten: output.position)
    }

    /// Runs a parsing step, turning parser errors into ``RemuxError``s.
    static func parse<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ISOBMFFError {
            throw RemuxError(error)
        }
    }

    static func select(_ choice: TrackChoice, in movie: Movie, path: String) throws -> (Track, Int) {
        let audio = movie.tracks.filter(\.isAudio)
        let wanted: Int
        switch choice {
        case .firstAudio: wanted = 0
        case .audioIndex(let n): wanted = n
        }
        guard wanted >= 0, wanted < audio.count else {
            let kinds = movie.tracks.map { "\($0.trackID):\($0.handlerType)" }.joined(separator: ", ")
            let has = movie.tracks.isEmpty ? "no tracks" : "tracks \(kinds)"
            if audio.isEmpty {
                throw RemuxError(.noAudioTrack, "\(path) has no audio track (it has \(has))")
            }
            throw RemuxError(.noAudioTrack, "\(path) has no audio track \(wanted): it has \(audio.count) "
                             + "(numbered from 0; \(has))")
        }
        return (audio[wanted], wanted)
    }

    /// Refuses tracks whose samples live in another file (a `dref` entry without the
    /// self-contained flag, ISO/IEC 14496-12 § 8.7.2).
    static func checkSamplesAreInFile(_ track: Track) throws {
        guard let references = track.dataReferences else { return }
        for description in track.sampleDescriptions.entries {
            // data_reference_index sits at bytes 14–15 of every sample entry (§ 8.5.2.2).
            guard description.bytes.count >= 16 else { continue }
            let index = Int(description.bytes[14]) << 8 | Int(description.bytes[15])
            guard index >= 1, index <= references.entries.count else {
                throw RemuxError(.invalidInput, "\(description.path): data reference \(index) does not exist "
                                 + "(dref has \(references.entries.count))")
            }
            if !references.entries[index - 1].isSelfContained {
                throw RemuxError(.unsupportedInput, "\(track.path): the audio samples are stored in another file "
                                 + "(dref entry '\(references.entries[index - 1].type)'), not in this one")
            }
        }
    }
}
