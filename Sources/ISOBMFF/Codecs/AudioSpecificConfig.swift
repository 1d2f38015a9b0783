/// The MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 § 1.6.2.1): the AAC decoder
/// configuration stored in `esds`. Only the fields needed to describe the stream are read.
public struct AudioSpecificConfig: Sendable, Equatable {
    /// 2 is AAC LC, 5 SBR (HE-AAC), 29 PS (HE-AAC v2), 23 LD, 39 ELD, …
    public var audioObjectType: Int
    /// The core sampling frequency in Hz.
    public var samplingFrequency: Int
    /// 0 means "defined in a program config element".
    public var channelConfiguration: Int
    /// The SBR output frequency when SBR is signalled explicitly.
    public var extensionSamplingFrequency: Int?
    /// The object type the configuration starts with: 5 (SBR, HE-AAC) or 29 (PS, HE-AAC v2)
    /// when they are signalled explicitly, else ``audioObjectType``. RFC 6381 codec strings
    /// use this one (`mp4a.40.5`, `mp4a.40.29`).
    public var signalledObjectType: Int

    static let frequencies = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// Parses `bytes`, the DecoderSpecificInfo of an `esds`. Throws when they end before the
    /// fields read or use a reserved sampling frequency index.
    public init(parsing bytes: [UInt8]) throws(ISOBMFFError) {
        do {
            try self.init(bits: bytes)
        } catch {
            throw ISOBMFFError(.invalidValue, "malformed AudioSpecificConfig", path: "esds", offset: nil)
        }
    }

    private struct Invalid: Error {}

    private init(bits bytes: [UInt8]) throws {
        var bits = BitReader(bytes[...])
        func read(_ count: Int) throws -> Int {
            guard let value = bits.bits(count) else { throw Invalid() }
            return Int(value)
        }
        func objectType() throws -> Int {
            let type = try read(5)
            return type == 31 ? 32 + (try read(6)) : type
        }
        func frequency() throws -> Int {
            let index = try read(4)
            if index == 0xF { return try read(24) }
            guard index < Self.frequencies.count else { throw Invalid() }
            return Self.frequencies[index]
        }
        audioObjectType = try objectType()
        signalledObjectType = audioObjectType
        samplingFrequency = try frequency()
        channelConfiguration = try read(4)
        extensionSamplingFrequency = nil
        if audioObjectType == 5 || audioObjectType == 29 {
            extensionSamplingFrequency = try frequency()
            audioObjectType = try objectType()
        }
    }

    /// The AAC-LC configuration of a stream whose `esds` carries none, built from the
    /// sample entry's rate and channel count: what FFmpeg's AAC decoder assumes then
    /// (it configures itself from the container's fields). Nil when no AAC channel
    /// configuration has `channelCount` channels (ISO/IEC 14496-3 Table 1.19) or the rate
    /// is 0 or needs more than 24 bits.
    public static func lowComplexity(sampleRate: Int, channelCount: Int) -> (config: AudioSpecificConfig, bytes: [UInt8])? {
        let configuration: Int
        switch channelCount {
        case 1...6: configuration = channelCount
        case 8: configuration = 7
        default: return nil
        }
        guard sampleRate > 0, sampleRate < 1 << 24 else { return nil }
        // audioObjectType 2 (5 bits), samplingFrequencyIndex (4 bits, 15 then a 24-bit rate
        // when the table lacks it), channelConfiguration (4 bits), then the GASpecificConfig:
        // frameLengthFlag 0 (1024 samples), dependsOnCoreCoder 0, extensionFlag 0.
        var fields: [(value: Int, bits: Int)] = [(2, 5)]
        if let index = frequencies.firstIndex(of: sampleRate) {
            fields.append((index, 4))
        } else {
            fields += [(0xF, 4), (sampleRate, 24)]
        }
        fields += [(configuration, 4), (0, 3)]
        var bits: [UInt8] = []
        for field in fields {
            for shift in stride(from: field.bits - 1, through: 0, by: -1) { bits.append(UInt8(field.value >> shift & 1)) }
        }
        bits += [UInt8](repeating: 0, count: (8 - bits.count % 8) % 8)
        let bytes = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | $1 }
        }
        guard let config = try? AudioSpecificConfig(parsing: bytes) else { return nil }
        return (config, bytes)
    }

    /// The number of channels the decoder outputs, or nil when a program config element
    /// defines them. Parametric stereo (HE-AAC v2) turns a mono core into stereo.
    public var channelCount: Int? {
        if signalledObjectType == 29 && channelConfiguration == 1 { return 2 }
        return switch channelConfiguration {
        case 1...6: channelConfiguration
        case 7, 12, 14: 8
        case 11: 7
        case 13: 24
        default: nil
        }
    }

    /// Object types of the AAC family that an M4A carries as `mp4a`.
    public var isAAC: Bool {
        [1, 2, 3, 4, 5, 6, 7, 17, 19, 20, 22, 23, 29, 39, 42].contains(audioObjectType)
    }
}

