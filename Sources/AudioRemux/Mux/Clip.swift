import ISOBMFF

/// One music clip: its audio track, checked, with the numbers the timeline needs.
struct Clip {
    let path: String
    let track: MediaTrack
    let samples: SampleIndex
    let codec: AudioCodec
    let outputEntry: [UInt8]
    /// What of the clip's sample entry could not be kept (``CopiedTrack``).
    let warnings: [String]
    let timing: ClipTiming

    init(path: String, input: some ByteSource) throws {
        self.path = path
        let reader = try BackgroundMusic.explained(source: input) { try MovieReader(reading: input) }
        let audio = reader.tracks.filter { $0.kind == .audio }
        guard let track = audio.first else {
            throw RemuxError(.noAudioTrack, "\(path) has no audio track")
        }
        self.track = track
        try Extraction.checkSamplesAreInFile(track.track)
        samples = try BackgroundMusic.converted { try reader.samples(of: track) }
        guard let firstSample = samples.first else {
            throw RemuxError(.invalidInput, "\(path) holds no audio to play")
        }
        let index = Int(firstSample.descriptionIndex) - 1
        let entries = track.track.sampleDescriptions.entries
        guard index >= 0, index < entries.count else {
            throw RemuxError(.invalidInput, "\(path): the audio track has no sample description")
        }
        let entry = entries[index]
        codec = try AudioCodec(entry: entry, quickTimeLayout: reader.movie.usesQuickTimeLayout)
        var warnings: [String] = []
        outputEntry = CopiedTrack.soundEntry(codec.outputEntry(original: entry), quickTimeLayout: false,
                                             track: track.track, notes: &warnings)
        self.warnings = warnings
        let timescale = track.timescale
        guard timescale > 0 else { throw RemuxError(.invalidInput, "\(path): the audio track's timescale is 0") }
        // A packet claiming hours (a first stts delta of 0xFFFFFC00 was seen) would make one
        // packet cover the whole edit: the output held that packet alone and did not decode.
        // Its real length is unknown without decoding, so the clip is refused.
        let longest = UInt64(timescale) * Limits.maximumAudioPacketSeconds  // < 2^36.
        var durations: [UInt32] = []
        durations.reserveCapacity(samples.count)
        for sample in samples {
            if sample.descriptionIndex != firstSample.descriptionIndex {
                throw RemuxError(.incompatibleClips, "\(path) changes its coding midway (several sample descriptions)")
            }
            // As extraction refuses them: no codec this tool copies has empty packets (the
            // structured fuzzer's clip of 32 empty packets made a writer bug reachable).
            if sample.size == 0 {
                throw RemuxError(.invalidInput, "\(path): audio packet \(durations.count + 1) is empty (size 0): no "
                                 + "codec this tool copies has empty packets")
            }
            if UInt64(sample.duration) > longest {
                throw RemuxError(.invalidInput, "\(path): packet \(durations.count + 1) lasts \(sample.duration) ticks "
                                 + "(\(sample.duration / timescale) s at \(timescale) Hz) by its timing table (stts); "
                                 + "an audio packet lasts at most a few seconds, so the clip's timing cannot be placed")
            }
            durations.append(sample.duration)
        }
        let total = samples.totalDuration
        let presentation = reader.presentation(of: track, samples: samples)
        let priming = min(presentation.priming, total)
        var presented = total - priming
        let segments = presentation.edits.filter { !$0.isEmpty }.totalDuration
        if segments > 0, let ticks = rescale(segments, from: presentation.segmentTimescale, to: timescale) {
            // An edit in a coarser movie timescale (FFmpeg writes milliseconds) is the media's
            // end rounded: within one movie tick of it, the media says where the sound ends
            // (as FFmpeg reads it), and the parts of a join do not drift by the rounding.
            let tick = UInt64(timescale) / UInt64(max(presentation.segmentTimescale, 1)) + 1
            if ticks < presented && presented - ticks >= tick { presented = ticks }
        }
        guard presented > 0 else { throw RemuxError(.invalidInput, "\(path) holds no audio to play") }
        timing = ClipTiming(durations: durations, priming: priming, presented: presented)
    }

    func sharesCoding(with other: Clip) -> Bool {
        codec.kind == other.codec.kind && codec.sampleRate == other.codec.sampleRate
            && codec.channelCount == other.codec.channelCount
            && track.timescale == other.track.timescale
            && decoderConfiguration == other.decoderConfiguration
    }

    /// The bytes that configure the decoder: the AudioSpecificConfig for AAC, else the
    /// configuration box's payload (bitrate fields in `esds` may differ freely).
    var decoderConfiguration: [UInt8] {
        if let descriptor = codec.descriptor {
            return [descriptor.objectTypeIndication] + (descriptor.decoderSpecificInfo ?? [])
        }
        let payload = codec.configuration.payload
        switch codec.kind {
        case .flac where payload.count >= 4 + 4 + 34:
            // STREAMINFO: the sample rate, channels and bits per sample configure the decoder;
            // block and frame sizes, the sample count and the MD5 describe one file.
            let info = payload[8..<42]
            return Array(info[(info.startIndex + 10)..<(info.startIndex + 13)]) + [info[info.startIndex + 13] & 0xF0]
        case .alac where payload.count >= 4 + 24:
            // The magic cookie but its maxFrameBytes and avgBitRate, which describe one file.
            let cookie = payload[4..<28]
            return Array(cookie[cookie.startIndex..<(cookie.startIndex + 12)])
                + Array(cookie[(cookie.startIndex + 20)..<(cookie.startIndex + 24)])
        default:
            return payload
        }
    }

    var describe: String {
        "\(codec.codecString), \(codec.sampleRate) Hz, \(codec.channelCount) ch"
    }
}
