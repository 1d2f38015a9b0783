/// `stco` and `co64`: the file offset of every chunk (ISO/IEC 14496-12 § 8.7.5).
///
/// Both parse into this one type. When written, the box is `stco` if every offset fits in
/// 32 bits and `co64` otherwise.
public struct ChunkOffsetBox: Box {
    /// `stco`, written when every offset fits in 32 bits.
    public static let type = FourCC.stco
    /// `co64`, written when an offset needs 64 bits (chunks past 4 GiB).
    public static let largeType = FourCC.co64

    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The absolute file offset of each chunk, chunk 1 first; 64-bit whichever box they came
    /// from, so code that uses them need not care.
    public var offsets: [UInt64]

    /// A table of `offsets`; ``write(to:)`` picks `stco` or `co64` for them.
    public init(offsets: [UInt64]) {
        self.offsets = offsets
    }

    /// Parses `stco`.
    public init(parsing payload: inout ByteReader) throws {
        try self.init(parsing: &payload, entrySize: 4)
    }

    /// Parses `co64`.
    public init(parsingLarge payload: inout ByteReader) throws {
        try self.init(parsing: &payload, entrySize: 8)
    }

    private init(parsing payload: inout ByteReader, entrySize: Int) throws {
        let (_, flags) = try payload.readVersionAndFlags()
        self.flags = flags
        let count = try payload.readEntryCount(entrySize: entrySize)
        offsets = [UInt64](repeating: 0, count: count)
        for i in 0..<count {
            offsets[i] = entrySize == 8 ? try payload.readUInt64() : UInt64(try payload.readUInt32())
        }
    }

    /// Whether writing needs `co64`.
    public var needsLargeOffsets: Bool {
        offsets.contains { $0 > UInt64(UInt32.max) }
    }

    /// The bytes `write(to:)` produces for `count` offsets, without building them.
    public static func serializedSize(count: Int, large: Bool) -> Int {
        16 + count * (large ? 8 : 4)
    }

    /// Writes `stco`, or `co64` when ``needsLargeOffsets``: the smaller box whenever it can
    /// hold the offsets, so an output's layout can be planned from ``serializedSize(count:large:)``.
    public func write(to writer: inout BoxWriter) {
        let large = needsLargeOffsets
        writer.fullBox(large ? Self.largeType : Self.type, version: 0, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: offsets.count))
            for offset in offsets {
                if large { w.write(offset) } else { w.write(UInt32(truncatingIfNeeded: offset)) }
            }
        }
    }
}
