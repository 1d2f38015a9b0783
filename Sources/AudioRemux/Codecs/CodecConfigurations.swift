import ISOBMFF

/// The configuration boxes of the non-AAC codecs an M4A can hold: enough of each to
/// describe the stream (sample rate, channels). The boxes themselves are copied unchanged.

/// `dac3` (ETSI TS 102 366 Annex F.4): AC-3.
struct AC3Configuration {
    var sampleRate: Int
    var channelCount: Int

    init(payload: [UInt8]) throws {
        var bits = BitReader(payload)
        let fscod = try bits.read(2)
        _ = try bits.read(5 + 3)  // bsid, bsmod
        let acmod = try bits.read(3)
        let lfe = try bits.read(1)
        guard fscod < 3 else { throw BitReader.Invalid() }
        sampleRate = [48000, 44100, 32000][fscod]
        channelCount = [2, 1, 2, 3, 3, 4, 4, 5][acmod] + lfe
    }
}

/// `dec3` (ETSI TS 102 366 Annex F.6): E-AC-3, described by its first independent
/// substream plus the channels its dependent substreams add.
struct EAC3Configuration {
    var sampleRate: Int
    var channelCount: Int

    init(payload: [UInt8]) throws {
        var bits = BitReader(payload)
        _ = try bits.read(13)  // data_rate
        _ = try bits.read(3)  // num_ind_sub
        let fscod = try bits.read(2)
        _ = try bits.read(5 + 1 + 1 + 3)  // bsid, reserved, asvc, bsmod
        let acmod = try bits.read(3)
        let lfe = try bits.read(1)
        _ = try bits.read(3)
        let dependents = try bits.read(4)
        var extra = 0
        if dependents > 0 {
            // chan_loc (Table F.6.1): each bit adds one channel, or two for the pairs.
            let locations = try bits.read(9)
            let pairs = [true, true, true, false, false, true, true, false, true]
            for bit in 0..<9 where locations & (1 << (8 - bit)) != 0 { extra += pairs[bit] ? 2 : 1 }
        }
        guard fscod < 3 else { throw BitReader.Invalid() }
        sampleRate = [48000, 44100, 32000][fscod]
        channelCount = [2, 1, 2, 3, 3, 4, 4, 5][acmod] + lfe + extra
    }
}

/// `dOps` (Encapsulation of Opus in ISOBMFF § 4.3.2). Opus always decodes at 48 kHz.
struct OpusConfiguration {
    var channelCount: Int
    var preSkip: Int

    init(payload: [UInt8]) throws {
        guard payload.count >= 11, payload[0] == 0 else { throw BitReader.Invalid() }
        channelCount = Int(payload[1])
        preSkip = Int(payload[2]) << 8 | Int(payload[3])
    }
}

/// `dfLa` (FLAC in ISOBMFF § 3.3.2): its first metadata block must be STREAMINFO.
struct FLACConfiguration {
    var sampleRate: Int
    var channelCount: Int

    /// - Parameter body: the `dfLa` full box's body (after version and flags): metadata
    ///   blocks, each a 4-byte block header then its data.
    init(body: ArraySlice<UInt8>) throws {
        let body = Array(body)
        // The first block's header (type 0, STREAMINFO, in the low 7 bits), then its 34 bytes.
        guard body.count >= 4 + 34, body[0] & 0x7F == 0 else { throw BitReader.Invalid() }
        var bits = BitReader(Array(body[4..<(4 + 34)]))
        _ = try bits.read(16 + 16 + 24 + 24)
        sampleRate = try bits.read(20)
        channelCount = try bits.read(3) + 1
    }
}

/// The ALAC magic cookie in an `alac` box (Apple Lossless, ALACSpecificConfig).
struct ALACConfiguration {
    var sampleRate: Int
    var channelCount: Int

    /// - Parameter body: the `alac` full box's body (after version and flags): the 24-byte
    ///   ALACSpecificConfig.
    init(body: ArraySlice<UInt8>) throws {
        let config = Array(body)
        guard config.count >= 24 else { throw BitReader.Invalid() }
        channelCount = Int(config[9])
        sampleRate = config[20..<24].reduce(0) { $0 << 8 | Int($1) }
    }
}
