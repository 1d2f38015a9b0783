import ISOBMFF

/// What an audio sample entry holds, and whether it can be stream-copied into an M4A.
public struct AudioCodec: Sendable {
    public var entry: AudioSampleEntry
    public var descriptor: ElementaryStreamDescriptorBox
    public var config: AudioSpecificConfig?

    /// MPEG-4 audio and the three MPEG-2 AAC profiles (ISO/IEC 14496-1 Table 5).
    static let aacObjectTypeIndications: Set<UInt8> = [0x40, 0x66, 0x67, 0x68]

    static let pcmFormats: Set<FourCC> = ["lpcm", "twos", "sowt", "in24", "in32", "fl32", "fl64", "raw ", "NONE"]

    /// Checks that `entry` is AAC in `mp4a`, the codec this version copies.
    init(entry description: SampleDescriptionBox.Entry, quickTimeLayout: Bool) throws {
        let format = description.format
        if format == .enca {
            throw RemuxError(.unsupportedInput, "the audio track is encrypted (enca): it cannot be extracted")
        }
        if Self.pcmFormats.contains(format) {
            throw RemuxError(.unsupportedCodec, "unsupported codec '\(format)' (PCM): it cannot be stream-copied "
                             + "into M4A; only AAC (mp4a) is supported")
        }
        guard format == .mp4a else {
            throw RemuxError(.unsupportedCodec, "unsupported codec '\(format)': only AAC (mp4a) can be copied "
                             + "into M4A by this version")
        }
        let entry: AudioSampleEntry
        do {
            entry = try AudioSampleEntry(parsing: description, quickTimeLayout: quickTimeLayout)
        } catch let error as ISOBMFFError {
            throw RemuxError(error)
        }
        guard let descriptor = entry.elementaryStreamDescriptor else {
            throw RemuxError(.invalidInput, "\(description.path) at byte \(description.fileOffset): mp4a sample entry "
                             + "has no esds box, so the codec is unknown")
        }
        let objectType = descriptor.objectTypeIndication
        guard Self.aacObjectTypeIndications.contains(objectType) else {
            let name = objectType == 0x6B || objectType == 0x69 ? " (MPEG audio, MP3/MP2)" : ""
            throw RemuxError(.unsupportedCodec, "unsupported codec 'mp4a' with object type 0x\(hex(objectType))"
                             + "\(name): only AAC can be copied into M4A by this version")
        }
        var config: AudioSpecificConfig?
        if let info = descriptor.decoderSpecificInfo, !info.isEmpty {
            guard let parsed = try? AudioSpecificConfig(parsing: info) else {
                throw RemuxError(.invalidInput, "\(description.path): the AudioSpecificConfig in esds is malformed")
            }
            config = parsed
        } else if objectType == 0x40 {
            throw RemuxError(.invalidInput, "\(description.path): esds has no AudioSpecificConfig for MPEG-4 audio")
        }
        if let config, objectType == 0x40, !config.isAAC {
            throw RemuxError(.unsupportedCodec, "unsupported codec: MPEG-4 audio object type "
                             + "\(config.audioObjectType) is not AAC")
        }
        self.entry = entry
        self.descriptor = descriptor
        self.config = config
    }

    /// The sample rate the stream decodes to.
    public var sampleRate: Int {
        if let config { return config.extensionSamplingFrequency ?? config.samplingFrequency }
        if let rate = entry.sampleRateV2 { return Int(exactly: rate.rounded()) ?? 0 }
        return Int(entry.sampleRate >> 16)
    }

    public var channelCount: Int {
        config?.channelCount ?? Int(entry.channelCountV2 ?? UInt32(entry.channelCount))
    }

    /// The RFC 6381 codec string, such as `mp4a.40.2`.
    public var codecString: String {
        let objectType = descriptor.objectTypeIndication
        if objectType == 0x40, let config { return "mp4a.40.\(config.audioObjectType)" }
        return "mp4a.\(hex(objectType))"
    }

    /// The entry as it must appear in an M4A: ISO version 0 entries are kept byte for byte;
    /// QuickTime version 1/2 descriptions and `wave`-wrapped configurations are rewritten as
    /// an ISO entry carrying the same `esds`, as FFmpeg does.
    func outputEntry(original: SampleDescriptionBox.Entry) -> [UInt8] {
        guard entry.version != 0 || entry.hasWaveBox else { return original.bytes }
        return AudioSampleEntry.isoEntry(format: .mp4a, channelCount: UInt16(clamping: channelCount),
                                         sampleRate: UInt32(clamping: sampleRate),
                                         children: [descriptor.serialized])
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
