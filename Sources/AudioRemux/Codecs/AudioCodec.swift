import ISOBMFF

/// What an audio sample entry holds, and whether it can be stream-copied into an M4A.
struct AudioCodec: Sendable {
    /// The codecs an M4A (an ISO base media file) can carry.
    enum Kind: String, Sendable {
        /// AAC, MP3 and MP2 (all in `mp4a`), ALAC (`alac`), AC-3 (`ac-3`), E-AC-3 (`ec-3`), Opus
        /// (`Opus`) and FLAC (`fLaC`).
        case aac, mp3, mp2, alac, ac3, eac3, opus, flac
    }

    /// Which codec, which decides the output's brands and how its sample entry is written.
    var kind: Kind
    /// The sample entry, parsed.
    var entry: AudioSampleEntry
    /// The box that configures the decoder (`esds`, `alac`, `dac3`, `dec3`, `dOps`, `dfLa`),
    /// its payload exactly as in the input.
    var configuration: CodecConfigurationBox
    /// For `mp4a`: the ES descriptor and, for AAC, its AudioSpecificConfig.
    var descriptor: ElementaryStreamDescriptorBox?
    /// For AAC (and MPEG audio signalled through MPEG-4 audio): the parsed AudioSpecificConfig.
    var config: AudioSpecificConfig?
    /// The sample rate the stream decodes to.
    var sampleRate: Int
    /// The channel count the stream decodes to: from the codec configuration where it says,
    /// else from the sample entry.
    var channelCount: Int
    /// For AAC whose `esds` holds no AudioSpecificConfig where ISO/IEC 14496-1 puts it: the
    /// AAC-LC one built from the sample entry's fields (as FFmpeg's decoder assumes), which
    /// the output's entry carries in a new `esds`.
    var assumedConfig: [UInt8]?
    /// What was assumed, for the user.
    var warnings: [String] = []

    /// MPEG-4 audio and the three MPEG-2 AAC profiles (ISO/IEC 14496-1 Table 5).
    static let aacObjectTypeIndications: Set<UInt8> = [0x40, 0x66, 0x67, 0x68]

    /// Uncompressed audio and IMA ADPCM: QuickTime formats extraction refuses.
    static let pcmFormats = AudioSampleEntry.uncompressedFormats.union(["ima4"])

    /// The configuration box each non-`mp4a` format needs.
    static let configurationTypes: [FourCC: (Kind, FourCC)] = [
        "alac": (.alac, "alac"), "ac-3": (.ac3, "dac3"), "ec-3": (.eac3, "dec3"), "Opus": (.opus, "dOps"),
        "fLaC": (.flac, "dfLa"),
    ]

    /// Whether ``init(entry:quickTimeLayout:)`` judges entries of `format` by their content
    /// (the codecs an M4A carries); other formats it refuses by name alone.
    static func isChecked(_ format: FourCC) -> Bool {
        format == .mp4a || configurationTypes[format] != nil
    }

    init(entry description: SampleDescriptionBox.Entry, quickTimeLayout: Bool) throws {
        let format = description.format
        let place = "\(description.path) at byte \(description.fileOffset)"
        if format == .enca {
            throw RemuxError(.unsupportedInput, "the audio track is encrypted (enca): it cannot be extracted")
        }
        if Self.pcmFormats.contains(format) {
            throw RemuxError(.unsupportedCodec, "unsupported codec '\(format)' (PCM or another QuickTime-only "
                             + "audio format): it cannot be stream-copied into M4A")
        }
        guard format == .mp4a || Self.configurationTypes[format] != nil else {
            throw RemuxError(.unsupportedCodec, "unsupported codec '\(format)': it cannot be stream-copied into "
                             + "M4A (supported: AAC, MP3/MP2 in mp4a, ALAC, AC-3, E-AC-3, Opus, FLAC)")
        }
        let entry: AudioSampleEntry
        do {
            entry = try AudioSampleEntry(parsing: description, quickTimeLayout: quickTimeLayout)
        } catch {
            throw RemuxError(bridging: error)
        }
        self.entry = entry
        descriptor = nil
        config = nil
        let fieldRate = entry.declaredSampleRate
        let fieldChannels = entry.declaredChannelCount

        if let (kind, boxType) = Self.configurationTypes[format] {
            guard let box = entry.configuration(boxType) else {
                throw RemuxError(.invalidInput, "\(place): '\(format)' sample entry has no \(boxType) box")
            }
            self.kind = kind
            configuration = box
            let payload = box.payload
            do {
                switch kind {
                case .ac3:
                    let parsed = try AC3Configuration(payload: payload)
                    (sampleRate, channelCount) = (parsed.sampleRate, parsed.channelCount)
                case .eac3:
                    let parsed = try EAC3Configuration(payload: payload)
                    (sampleRate, channelCount) = (parsed.sampleRate, parsed.channelCount)
                case .opus:
                    (sampleRate, channelCount) = (48000, try OpusConfiguration(payload: payload).channelCount)
                case .flac:
                    let parsed = try FLACConfiguration(body: box.fullBoxBody ?? [])
                    (sampleRate, channelCount) = (parsed.sampleRate, parsed.channelCount)
                default:
                    let parsed = try ALACConfiguration(body: box.fullBoxBody ?? [])
                    (sampleRate, channelCount) = (parsed.sampleRate, parsed.channelCount)
                }
            } catch {
                throw RemuxError(.invalidInput, "\(place): the \(boxType) box is malformed")
            }
            return
        }

        guard let descriptor = entry.elementaryStreamDescriptor, let esds = entry.configuration(.esds) else {
            throw RemuxError(.invalidInput, "\(place): mp4a sample entry has no esds box, so the codec is unknown")
        }
        self.descriptor = descriptor
        configuration = esds
        guard descriptor.hasDecoderConfiguration else {
            // FFmpeg takes `mp4a` for AAC, reads no configuration past the stray descriptor
            // and decodes AAC-LC by the entry's fields; a configuration found further on
            // could belong to anything (one saying 3 channels for a stereo stream made
            // every frame of the output fail in FFmpeg).
            kind = .aac
            (config, assumedConfig, warnings) = try Self.assumeLowComplexity(
                rate: fieldRate, channels: fieldChannels, place: place,
                why: "esds holds no DecoderConfigDescriptor where ISO/IEC 14496-1 puts it (another descriptor "
                    + "stands there)")
            (sampleRate, channelCount) = (fieldRate, fieldChannels)
            return
        }
        let objectType = descriptor.objectTypeIndication
        switch objectType {
        case 0x6B, 0x69:
            // MPEG-1/2 audio; layer III is by far the most common (ISO/IEC 14496-1 Table 5).
            kind = .mp3
            (sampleRate, channelCount) = (fieldRate, fieldChannels)
            return
        case _ where Self.aacObjectTypeIndications.contains(objectType):
            kind = .aac
        default:
            throw RemuxError(.unsupportedCodec, "unsupported codec 'mp4a' with object type "
                             + "0x\(objectType.hexDigits(uppercase: true)): it cannot be stream-copied into M4A")
        }
        if let info = descriptor.decoderSpecificInfo, !info.isEmpty {
            guard let parsed = try? AudioSpecificConfig(parsing: info) else {
                throw RemuxError(.invalidInput, "\(place): the AudioSpecificConfig in esds is malformed")
            }
            config = parsed
        } else if objectType == 0x40 {
            (config, assumedConfig, warnings) = try Self.assumeLowComplexity(
                rate: fieldRate, channels: fieldChannels, place: place,
                why: "esds holds no DecoderSpecificInfo (AudioSpecificConfig) where ISO/IEC 14496-1 puts it")
            (sampleRate, channelCount) = (fieldRate, fieldChannels)
            return
        }
        if let config, objectType == 0x40, !config.isAAC {
            if [32, 33, 34].contains(config.audioObjectType) {
                kind = config.audioObjectType == 34 ? .mp3 : .mp2
            } else {
                throw RemuxError(.unsupportedCodec, "unsupported codec: MPEG-4 audio object type "
                                 + "\(config.audioObjectType) is neither AAC nor MPEG audio")
            }
        }
        sampleRate = config.map { $0.extensionSamplingFrequency ?? $0.samplingFrequency } ?? fieldRate
        channelCount = config?.channelCount ?? fieldChannels
    }

    /// Takes the stream for AAC-LC at the sample entry's rate and channel count, as FFmpeg's
    /// decoder does when the `esds` gives it no configuration: the configuration, its bytes
    /// and a warning. Refuses (65) when no AAC channel configuration fits the entry's count.
    private static func assumeLowComplexity(rate: Int, channels: Int, place: String,
                                            why: String) throws -> (AudioSpecificConfig, [UInt8], [String]) {
        guard let (config, bytes) = AudioSpecificConfig.lowComplexity(sampleRate: rate, channelCount: channels) else {
            throw RemuxError(.invalidInput, "\(place): \(why), and the sample entry's \(channels) channels at "
                             + "\(rate) Hz fit no AAC configuration: the stream cannot be described")
        }
        return (config, bytes, ["\(place): \(why): the audio is taken for AAC-LC with the sample entry's "
                                + "\(channels) channels at \(rate) Hz, as FFmpeg decodes it, and written with that "
                                + "configuration"])
    }

    /// For MPEG audio (MP3, MP2), whose `esds` carries no configuration: the sample rate and
    /// channel count of the first frame header (ISO/IEC 11172-3 § 2.4.1.3), which FFmpeg
    /// also trusts over the sample entry's fields.
    mutating func refine(firstPacket bytes: [UInt8]) {
        guard kind == .mp3 || kind == .mp2, bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return }
        let version = Int(bytes[1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let rateIndex = Int(bytes[2] >> 2) & 3
        guard version != 1, rateIndex != 3 else { return }
        let base = [44100, 48000, 32000][rateIndex]
        sampleRate = version == 3 ? base : version == 2 ? base / 2 : base / 4
        channelCount = bytes[3] >> 6 == 3 ? 1 : 2
    }

    /// Whether the stream is AAC with SBR signalled explicitly (HE-AAC, HE-AAC v2): its
    /// packets decode through SBR's filter bank, which changes how a seam sounds (``SeamRule``).
    var signalsSBR: Bool {
        kind == .aac && config?.extensionSamplingFrequency != nil
    }

    /// The RFC 6381 codec string, such as `mp4a.40.2`, `mp4a.6B`, `ac-3`, `Opus`.
    var codecString: String {
        switch kind {
        case .aac, .mp3, .mp2:
            guard let descriptor else { return "mp4a" }
            if descriptor.objectTypeIndication == 0x40 || assumedConfig != nil, let config {
                return "mp4a.40.\(config.signalledObjectType)"
            }
            return "mp4a.\(descriptor.objectTypeIndication.hexDigits(uppercase: true))"
        default:
            return entry.format.description
        }
    }

    /// The entry as it must appear in an M4A (or any ISO file): ISO version 0 entries are
    /// kept byte for byte; QuickTime version 1/2 descriptions and `wave`-wrapped
    /// configurations are rewritten as an ISO entry carrying the same configuration box, as
    /// FFmpeg does; an AAC entry whose configuration was assumed gets a new `esds` with it.
    func outputEntry(original: SampleDescriptionBox.Entry) -> [UInt8] {
        if let assumedConfig {
            // A new esds, so that no reader finds the stray descriptors again.
            return CodecConfiguration.aac(audioSpecificConfig: assumedConfig, sampleRate: UInt32(clamping: sampleRate),
                                          channelCount: UInt16(clamping: channelCount),
                                          averageBitrate: descriptor?.averageBitrate ?? 0,
                                          maxBitrate: descriptor?.maxBitrate ?? 0).sampleEntry
        }
        guard entry.version != 0 || entry.hasWaveBox else { return original.bytes }
        var box = configuration.bytes
        if let descriptor, entry.hasWaveBox { box = descriptor.serialized }
        return AudioSampleEntry.isoEntry(format: entry.format, channelCount: UInt16(clamping: channelCount),
                                         sampleSize: entry.sampleSize == 0 ? 16 : entry.sampleSize,
                                         sampleRate: UInt32(clamping: sampleRate), children: [box])
    }
}
