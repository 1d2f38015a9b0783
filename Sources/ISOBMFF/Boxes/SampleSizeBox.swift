/// `stsz` and `stz2`: the size of every sample (ISO/IEC 14496-12 § 8.7.3).
///
/// Both parse into this one type; it is always written back as `stsz`.
public struct SampleSizeBox: Box {
    /// `stsz`, the type parsed by ``init(parsing:)`` and always written.
    public static let type = FourCC.stsz
    /// `stz2`, parsed by ``init(parsingCompact:)`` and written back as `stsz`.
    public static let compactType = FourCC.stz2

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// Non-zero when every sample has this size; `sizes` is then empty.
    public var constantSize: UInt32
    /// The number of samples in the track, whether ``sizes`` lists them or not.
    public var sampleCount: UInt32
    /// One size per sample when `constantSize` is 0.
    public var sizes: [UInt32]

    /// A table with one size per sample.
    public init(sizes: [UInt32]) {
        constantSize = 0
        sampleCount = UInt32(truncatingIfNeeded: sizes.count)
        self.sizes = sizes
    }

    /// A table where every sample has the same size: the box stays 20 bytes however many
    /// samples there are. A size of 0 cannot be said so (ISO/IEC 14496-12 § 8.7.3.2: a
    /// `sample_size` of 0 means the sizes follow), so every sample then gets an entry of 0.
    public init(constantSize: UInt32, sampleCount: UInt32) {
        self.constantSize = constantSize
        self.sampleCount = sampleCount
        sizes = constantSize == 0 ? Array(repeating: 0, count: Int(sampleCount)) : []
    }

    /// Parses `stsz`.
    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        constantSize = try payload.readUInt32()
        if constantSize != 0 {
            sampleCount = try payload.readUInt32()
            sizes = []
            return
        }
        let count = try payload.readEntryCount(entrySize: 4)
        sampleCount = UInt32(truncatingIfNeeded: count)  // Read from 32 bits.
        sizes = [UInt32](repeating: 0, count: count)
        for i in 0..<count { sizes[i] = try payload.readUInt32() }
    }

    /// Parses `stz2`, whose sizes are packed in 4, 8 or 16 bits.
    public init(parsingCompact payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.skip(3)
        let fieldSize = try payload.readUInt8()
        guard fieldSize == 4 || fieldSize == 8 || fieldSize == 16 else {
            throw payload.error(.invalidValue, "stz2 field size \(fieldSize) is not 4, 8 or 16")
        }
        let countOffset = payload.fileOffset
        let count32 = try payload.readUInt32()
        let bitsNeeded = UInt64(count32) * UInt64(fieldSize)  // < 2^36: no overflow.
        guard (bitsNeeded + 7) / 8 <= UInt64(payload.remaining), let count = Int(exactly: count32) else {
            throw payload.error(.countExceedsBox, "stz2 sample count \(count32) needs more bytes than the box has",
                                at: countOffset)
        }
        constantSize = 0
        sampleCount = count32
        sizes = [UInt32](repeating: 0, count: count)
        var i = 0
        while i < count {
            switch fieldSize {
            case 4:
                let byte = try payload.readUInt8()
                sizes[i] = UInt32(byte >> 4)
                if i + 1 < count { sizes[i + 1] = UInt32(byte & 0x0F) }
                i += 2
            case 8:
                sizes[i] = UInt32(try payload.readUInt8())
                i += 1
            default:
                sizes[i] = UInt32(try payload.readUInt16())
                i += 1
            }
        }
    }

    /// Writes `stsz`, even for a table read from `stz2`: every reader knows `stsz`, and the
    /// compact form saves little in an audio file.
    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(constantSize)
            w.write(sampleCount)
            if constantSize == 0 {
                for size in sizes { w.write(size) }
            }
        }
    }

    /// The size of sample `index` (0-based); `index` must be below `sampleCount`.
    @inlinable
    public func size(ofSample index: Int) -> UInt32 {
        constantSize != 0 ? constantSize : sizes[index]
    }
}
