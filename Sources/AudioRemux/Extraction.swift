import ISOBMFF

/// One extraction, planned: the input parsed, the track chosen and checked, the output's
/// `moov` built. Nothing has been written yet; ``write(from:to:)`` streams the output.
struct Extraction {
    let movie: Movie
    let track: Track
    let table: SampleTable
    let codec: AudioCodec
    let plan: OutputMovie

    /// - Parameter name: how to call the input in messages (its path).
    init(source: some ByteSource, choice: TrackChoice, name: String) throws {
        movie = try parse { try Movie(reading: source) }
        track = try Self.select(choice, in: movie, name: name)
        try Self.checkSamplesAreInFile(track)
        table = try Self.validatedTable(of: track, in: movie, name: name)
        if table.sampleCount == 0 && movie.isFragmented {
            throw RemuxError(.unsupportedInput, "\(name) is a fragmented MP4 (moof boxes): this version cannot "
                             + "extract from fragmented files yet")
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
        self.codec = codec
        plan = try OutputMovie(movie: movie, track: track, table: table, entries: entries, entryIndex: entryIndex,
                               addAACRoll: true)
    }

    /// The size of the output file.
    var outputSize: UInt64 {
        UInt64(plan.fileType.count + plan.movieBox.count + plan.mediaDataHeader.count) + plan.payloadSize
    }

    /// Writes the whole output file to `sink`, reading the samples from `source`.
    func write(from source: some ByteSource, to sink: inout some ByteSink, bufferSize: Int) throws {
        try sink.write(plan.fileType)
        try sink.write(plan.movieBox)
        try sink.write(plan.mediaDataHeader)
        try SampleCopier(bufferSize: bufferSize).copy(table, from: source, to: &sink)
    }

    func result(outputPath: String, bytesWritten: UInt64) -> ExtractionResult {
        ExtractionResult(outputPath: outputPath, inputTrackID: track.trackID, codec: codec.codecString,
                         sampleRate: codec.sampleRate, channelCount: codec.channelCount,
                         sampleCount: table.sampleCount, duration: track.durationInSeconds,
                         bytesWritten: bytesWritten)
    }

    static func select(_ choice: TrackChoice, in movie: Movie, name: String) throws -> Track {
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
                throw RemuxError(.noAudioTrack, "\(name) has no audio track (it has \(has))")
            }
            throw RemuxError(.noAudioTrack, "\(name) has no audio track \(wanted): it has \(audio.count) "
                             + "(numbered from 0; \(has))")
        }
        return audio[wanted]
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

    static func validatedTable(of track: Track, in movie: Movie, name: String) throws -> SampleTable {
        do {
            return try parse {
                try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                excluding: [movie.movieBoxRange])
            }
        } catch let error as RemuxError where error.parseError?.code == .invalidSampleTable {
            // Samples past the end of a file that ends inside a box: the file was cut short.
            guard let cut = movie.truncatedBox else { throw error }
            throw RemuxError(.truncatedInput, "\(name) is truncated: it ends at byte \(movie.fileLength), inside "
                             + "the \(cut.type) box at byte \(cut.offset) that should run to byte "
                             + "\(cut.offset &+ cut.size); the audio is incomplete (\(error.message))",
                             parseError: error.parseError)
        }
    }
}

/// Runs a parsing step, turning parser errors into ``RemuxError``s.
func parse<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ISOBMFFError {
        throw RemuxError(error)
    }
}
