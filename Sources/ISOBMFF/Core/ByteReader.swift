/// A cursor over bytes in memory that never reads outside `[position, end)`.
///
/// Each box is parsed through a reader limited to that box's payload, so a field can never
/// be read from a neighbour. Every read that runs out of bytes throws a ``ISOBMFFError``
/// with code `.truncated`, the reader's box path and the absolute file offset.
public struct ByteReader: Sendable {
    @usableFromInline let storage: [UInt8]
    @usableFromInline var index: Int
    /// Index one past the last byte this reader may read.
    @usableFromInline let endIndex: Int
    /// The absolute file offset of `storage[0]`.
    let baseOffset: UInt64
    /// The box path used in errors, such as `moov/trak[1]/mdia/minf/stbl/stsz`.
    public var path: String

    /// A reader over all of `bytes`, which start at `fileOffset` in the file.
    public init(_ bytes: [UInt8], fileOffset: UInt64 = 0, path: String = "") {
        self.storage = bytes
        self.index = 0
        self.endIndex = bytes.count
        self.baseOffset = fileOffset
        self.path = path
    }

    private init(storage: [UInt8], index: Int, endIndex: Int, baseOffset: UInt64, path: String) {
        self.storage = storage
        self.index = index
        self.endIndex = endIndex
        self.baseOffset = baseOffset
        self.path = path
    }

    /// Bytes left to read.
    public var remaining: Int { endIndex - index }

    /// The absolute file offset of the next byte.
    public var fileOffset: UInt64 { baseOffset &+ UInt64(index) }  // index <= storage.count: a real position.

    /// An error located at the current position (or at `offset`).
    public func error(_ code: ISOBMFFError.Code, _ message: String, at offset: UInt64? = nil) -> ISOBMFFError {
        ISOBMFFError(code, message, path: path, offset: offset ?? fileOffset)
    }

    @inlinable
    mutating func take(_ count: Int) throws -> Int {
        guard count >= 0, count <= endIndex - index else {
            throw error(.truncated, "needs \(count) more bytes, the box has \(remaining)")
        }
        let start = index
        index += count
        return start
    }

    /// Reads a byte, throwing `.truncated` when fewer than 1 bytes are left.
    public mutating func readUInt8() throws -> UInt8 {
        storage[try take(1)]
    }

    /// Reads a big-endian `UInt16`, throwing `.truncated` when fewer than 2 bytes are left.
    public mutating func readUInt16() throws -> UInt16 {
        let i = try take(2)
        return UInt16(storage[i]) << 8 | UInt16(storage[i + 1])
    }

    /// Reads a big-endian 24-bit value (full-box flags, descriptor fields), throwing
    /// `.truncated` when fewer than 3 bytes are left.
    public mutating func readUInt24() throws -> UInt32 {
        let i = try take(3)
        return UInt32(storage[i]) << 16 | UInt32(storage[i + 1]) << 8 | UInt32(storage[i + 2])
    }

    /// Reads a big-endian `UInt32`, throwing `.truncated` when fewer than 4 bytes are left.
    @inlinable
    public mutating func readUInt32() throws -> UInt32 {
        let i = try take(4)
        return UInt32(storage[i]) << 24 | UInt32(storage[i + 1]) << 16 | UInt32(storage[i + 2]) << 8
            | UInt32(storage[i + 3])
    }

    /// Reads a big-endian `UInt64`, throwing `.truncated` when fewer than 8 bytes are left.
    public mutating func readUInt64() throws -> UInt64 {
        let high = UInt64(try readUInt32())
        return high << 32 | UInt64(try readUInt32())
    }

    /// Reads a big-endian two's-complement `Int16`, throwing `.truncated` when fewer than 2 bytes are left.
    public mutating func readInt16() throws -> Int16 { Int16(bitPattern: try readUInt16()) }
    /// Reads a big-endian two's-complement `Int32`, throwing `.truncated` when fewer than 4 bytes are left.
    public mutating func readInt32() throws -> Int32 { Int32(bitPattern: try readUInt32()) }
    /// Reads a big-endian two's-complement `Int64`, throwing `.truncated` when fewer than 8 bytes are left.
    public mutating func readInt64() throws -> Int64 { Int64(bitPattern: try readUInt64()) }

    /// Reads a four-character code, throwing `.truncated` when fewer than 4 bytes are left.
    public mutating func readFourCC() throws -> FourCC { FourCC(rawValue: try readUInt32()) }

    /// Reads `count` bytes into a new array, throwing `.truncated` when fewer are left (or
    /// `count` is negative), so a length read from the file never allocates more than the box
    /// holds.
    public mutating func readBytes(_ count: Int) throws -> [UInt8] {
        let start = try take(count)
        return Array(storage[start..<(start + count)])
    }

    /// Reads everything that is left.
    public mutating func readRemainingBytes() -> [UInt8] {
        let bytes = Array(storage[index..<endIndex])
        index = endIndex
        return bytes
    }

    /// Moves past `count` bytes (reserved or unused fields), throwing `.truncated` when fewer
    /// are left.
    public mutating func skip(_ count: Int) throws {
        _ = try take(count)
    }

    /// Reads a full box's version and 24-bit flags (ISO/IEC 14496-12 § 4.2).
    public mutating func readVersionAndFlags() throws -> (version: UInt8, flags: UInt32) {
        let word = try readUInt32()
        return (UInt8(word >> 24), word & 0x00FF_FFFF)
    }

    /// Reads a 32-bit entry count and checks that `count × entrySize` bytes are really left,
    /// so that no table is allocated for entries the box does not hold.
    public mutating func readEntryCount(entrySize: Int) throws -> Int {
        let countOffset = fileOffset
        let count = try readUInt32()
        let (needed, overflow) = UInt64(count).multipliedReportingOverflow(by: UInt64(entrySize))
        guard !overflow, needed <= UInt64(remaining), let result = Int(exactly: count) else {
            throw error(.countExceedsBox,
                        "entry count \(count) needs \(count) × \(entrySize) bytes, the box has \(remaining)",
                        at: countOffset)
        }
        return result
    }

    /// Splits off a reader over the next `count` bytes and moves past them.
    public mutating func subReader(count: Int, path: String? = nil) throws -> ByteReader {
        let start = try take(count)
        return ByteReader(storage: storage, index: start, endIndex: start + count,
                          baseOffset: baseOffset, path: path ?? self.path)
    }

    /// The whole of the box `header` (read by ``readBox(depth:)`` from this reader's
    /// storage) as bytes, header included, exactly as in the file.
    public func bytes(of header: BoxHeader) -> [UInt8] {
        // The box lies inside storage: readBox checked it against this reader's bounds.
        let start = Int(header.offset - baseOffset)
        return Array(storage[start..<(start + Int(header.size))])
    }

    /// Reads the next box header, checks that the box lies inside this reader, and returns
    /// the header with a reader over the box's payload. Returns `nil` when no bytes are left.
    ///
    /// - Parameter depth: the nesting depth of the box to read (1 for a child of `moov`).
    public mutating func readBox(depth: Int) throws -> (header: BoxHeader, payload: ByteReader)? {
        guard remaining > 0 else { return nil }
        guard depth <= Limits.maximumDepth else {
            throw error(.nestingTooDeep, "boxes nest deeper than \(Limits.maximumDepth) levels")
        }
        var headerReader = self
        let header = try BoxHeader(parsing: &headerReader, available: UInt64(remaining), parentPath: path)
        // BoxHeader checked header.size <= remaining, so these conversions are exact.
        let headerSize = header.headerSize
        let payloadSize = Int(header.size) - headerSize
        try skip(headerSize)
        let payload = try subReader(count: payloadSize, path: header.path)
        return (header, payload)
    }
}
