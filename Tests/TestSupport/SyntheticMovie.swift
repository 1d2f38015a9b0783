import ISOBMFF

/// Builds small MP4 files in memory from box values, so tests can state exactly which
/// field is wrong. The default is a valid file: one AAC track of `sampleSizes.count`
/// samples of 1024 ticks at 44.1 kHz, two samples per chunk, stored in one `mdat` after
/// `moov`.
public struct SyntheticMovie {
    public var sampleSizes: [UInt32]
    public var timeToSample: TimeToSampleBox
    public var sampleToChunk: SampleToChunkBox
    /// Chunk offsets relative to the start of the `mdat` payload (made absolute on build),
    /// unless `absoluteChunkOffsets` is set.
    public var chunkOffsets: [UInt64]
    public var absoluteChunkOffsets = false
    public var useLargeChunkOffsets = false
    public var editList: EditListBox? = EditListBox(entries: [.init(segmentDuration: 100, mediaTime: 1024)])
    public var sampleEntries: [[UInt8]]
    public var handler: FourCC = .soun
    /// Raw boxes appended inside `stbl`, after the standard tables.
    public var extraSampleTableBoxes: [[UInt8]] = []
    /// Raw boxes placed before `moov`.
    public var leadingBoxes: [[UInt8]] = []
    /// Replaces the built `stbl` entirely when set (for malformed layouts).
    public var replaceSampleTable: [UInt8]?
    /// Raw boxes appended inside `moov` after the track (`udta`, `meta`, …).
    public var extraMovieBoxes: [[UInt8]] = []
    /// Raw boxes appended inside the track's `trak` after `mdia` (`udta`).
    public var extraTrackBoxes: [[UInt8]] = []
    /// Builds `moov` and an `mdat` header only (for plans of huge tracks).
    public var omitMediaData = false
    public var fileType = FileTypeBox(majorBrand: .isom, minorVersion: 512, compatibleBrands: [.isom, .mp42])

    /// AAC LC, 44.1 kHz, stereo: the AudioSpecificConfig `12 10`.
    public static let aacEntry: [UInt8] = AudioSampleEntry.isoEntry(
        format: .mp4a, channelCount: 2, sampleRate: 44100, children: [esds(objectType: 0x40, config: [0x12, 0x10])])

    public static func esds(objectType: UInt8, config: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.fullBox(.esds, version: 0, flags: 0) { e in
            let decoderSpecific: [UInt8] = [0x05, UInt8(config.count)] + config
            let decoderConfig: [UInt8] = [0x04, UInt8(13 + decoderSpecific.count), objectType, 0x15, 0, 0, 0,
                                          0, 0, 0xFA, 0, 0, 0, 0xFA, 0] + decoderSpecific
            let body: [UInt8] = [0, 1, 0] + decoderConfig + [0x06, 0x01, 0x02]
            e.write(bytes: [0x03, UInt8(body.count)] + body)
        }
        return w.bytes
    }

    public init(sampleCount: Int = 10) {
        sampleSizes = (0..<sampleCount).map { UInt32(100 + $0) }
        timeToSample = TimeToSampleBox(entries: [.init(sampleCount: UInt32(sampleCount), sampleDelta: 1024)])
        sampleToChunk = SampleToChunkBox(entries: [.init(firstChunk: 1, samplesPerChunk: 2, sampleDescriptionIndex: 1)])
        var offsets: [UInt64] = []
        var position: UInt64 = 0
        for (i, size) in sampleSizes.enumerated() {
            if i % 2 == 0 { offsets.append(position) }
            position += UInt64(size)
        }
        chunkOffsets = offsets
        sampleEntries = [Self.aacEntry]
    }

    /// The bytes of each sample: sample `i` is filled with the byte `i & 0xFF`.
    public var mediaData: [UInt8] {
        sampleSizes.enumerated().flatMap { i, size in [UInt8](repeating: UInt8(i & 0xFF), count: Int(size)) }
    }

    public func build() -> [UInt8] {
        let ftyp = fileType.serialized
        let leading = leadingBoxes.flatMap { $0 }
        let first = movieBox(base: 0)
        let base = UInt64(ftyp.count + leading.count + first.count + 8)
        let moov = movieBox(base: absoluteChunkOffsets ? 0 : base)
        if omitMediaData {
            return ftyp + leading + moov + MediaDataHeader.bytes(payloadSize: sampleSizes.reduce(0) { $0 + UInt64($1) })
        }
        var mdat = BoxWriter()
        mdat.box(.mdat) { $0.write(bytes: mediaData) }
        return ftyp + leading + moov + mdat.bytes
    }

    func movieBox(base: UInt64) -> [UInt8] {
        var w = BoxWriter()
        w.box(.moov) { moov in
            MovieHeaderBox(timescale: 1000, duration: 100, nextTrackID: 2).write(to: &moov)
            moov.box(.trak) { trak in
                var tkhd = BoxWriter()
                tkhd.fullBox(.tkhd, version: 0, flags: 3) { t in
                    t.writeZeros(8)
                    t.write(UInt32(1))
                    t.writeZeros(4)
                    t.write(UInt32(100))
                    t.writeZeros(16)
                    for value in MovieHeaderBox.identityMatrix { t.write(value) }
                    t.writeZeros(8)
                }
                trak.write(bytes: tkhd.bytes)
                if let editList { trak.box(.edts) { editList.write(to: &$0) } }
                trak.box(.mdia) { mdia in
                    mdia.fullBox(.mdhd, version: 0, flags: 0) { m in
                        m.writeZeros(8)
                        m.write(UInt32(44100))
                        m.write(UInt32(sampleSizes.count * 1024))
                        m.write(UInt16(0x55C4))
                        m.write(UInt16(0))
                    }
                    HandlerBox(handlerType: handler, name: "SoundHandler").write(to: &mdia)
                    mdia.box(.minf) { minf in
                        SoundMediaHeaderBox().write(to: &minf)
                        minf.box(.dinf) { DataReferenceBox.selfContained.write(to: &$0) }
                        if let replaceSampleTable {
                            minf.write(bytes: replaceSampleTable)
                            return
                        }
                        minf.box(.stbl) { stbl in
                            SampleDescriptionBox(entries: sampleEntries.map { .init(format: .mp4a, bytes: $0) })
                                .write(to: &stbl)
                            timeToSample.write(to: &stbl)
                            sampleToChunk.write(to: &stbl)
                            SampleSizeBox(sizes: sampleSizes).write(to: &stbl)
                            let offsets = chunkOffsets.map { $0 + base }
                            if useLargeChunkOffsets {
                                stbl.fullBox(.co64, version: 0, flags: 0) { c in
                                    c.write(UInt32(offsets.count))
                                    for offset in offsets { c.write(offset) }
                                }
                            } else {
                                ChunkOffsetBox(offsets: offsets).write(to: &stbl)
                            }
                            for box in extraSampleTableBoxes { stbl.write(bytes: box) }
                        }
                    }
                }
                for box in extraTrackBoxes { trak.write(bytes: box) }
            }
            for box in extraMovieBoxes { moov.write(bytes: box) }
        }
        return w.bytes
    }
}
