/// Builds boxes in memory, filling in each box's size when its body is done.
///
/// Sizes are never computed by hand: ``box(_:_:)`` reserves the header, runs the body and
/// then writes the size it produced, switching to a 64-bit size if the box outgrew 32 bits.
public struct BoxWriter: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer; `capacity` reserves room up front when the size is known (a planned
    /// `moov`), so that appending never reallocates.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far.
    public var count: Int { bytes.count }

    /// Appends one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Appends `value` big-endian, as every integer in the file format is stored (§ 4.2).
    public mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends the low 24 bits of `value` big-endian, the width of a full box's flags and of
    /// some descriptor fields.
    public mutating func writeUInt24(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` big-endian, as every integer in the file format is stored (§ 4.2).
    public mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` big-endian, as every integer in the file format is stored (§ 4.2).
    public mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends the two's-complement bits of `value`, big-endian.
    public mutating func write(_ value: Int16) { write(UInt16(bitPattern: value)) }
    /// Appends the two's-complement bits of `value`, big-endian.
    public mutating func write(_ value: Int32) { write(UInt32(bitPattern: value)) }
    /// Appends the two's-complement bits of `value`, big-endian.
    public mutating func write(_ value: Int64) { write(UInt64(bitPattern: value)) }
    /// Appends the code's four bytes, in file order.
    public mutating func write(_ value: FourCC) { write(value.rawValue) }
    /// Appends `value` unchanged: a payload copied through, or a box serialized elsewhere.
    public mutating func write<Bytes: Sequence>(bytes value: Bytes) where Bytes.Element == UInt8 {
        bytes.append(contentsOf: value)
    }

    /// Writes `count` zero bytes.
    public mutating func writeZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    /// Writes a box of `type` whose payload is what `body` writes.
    public mutating func box(_ type: FourCC, _ body: (inout BoxWriter) throws -> Void) rethrows {
        let start = bytes.count
        write(UInt32(0))
        write(type)
        try body(&self)
        let size = bytes.count - start
        if let size32 = UInt32(exactly: size) {
            patch(size32, at: start)
        } else {
            // Rare: a box over 4 GiB in memory. Insert the 64-bit largesize after the type.
            patch(UInt32(1), at: start)
            let largeSize = UInt64(size) + 8
            var field = BoxWriter()
            field.write(largeSize)
            bytes.insert(contentsOf: field.bytes, at: start + 8)
        }
    }

    /// Writes a full box: `box` with a version and 24-bit flags first.
    public mutating func fullBox(_ type: FourCC, version: UInt8, flags: UInt32,
                                 _ body: (inout BoxWriter) throws -> Void) rethrows {
        try box(type) { writer in
            writer.write(UInt32(version) << 24 | (flags & 0x00FF_FFFF))
            try body(&writer)
        }
    }

    private mutating func patch(_ value: UInt32, at index: Int) {
        bytes[index] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[index + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[index + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[index + 3] = UInt8(truncatingIfNeeded: value)
    }
}

/// The header of an `mdat` box whose payload is written separately (streamed).
public enum MediaDataHeader {
    /// 8 bytes, or 16 with a 64-bit largesize when the box would exceed 32 bits.
    public static func bytes(payloadSize: UInt64) -> [UInt8] {
        var writer = BoxWriter(capacity: 16)
        if !isLarge(payloadSize) {
            writer.write(UInt32(payloadSize + 8))
            writer.write(FourCC.mdat)
        } else {
            writer.write(UInt32(1))
            writer.write(FourCC.mdat)
            writer.write(payloadSize &+ 16)  // Callers pass real file sizes, far below 2^64.
        }
        assert(UInt64(writer.bytes.count) == size(payloadSize: payloadSize))
        return writer.bytes
    }

    /// The size of the header ``bytes(payloadSize:)`` gives: 8, or 16 past 32 bits.
    public static func size(payloadSize: UInt64) -> UInt64 {
        isLarge(payloadSize) ? 16 : 8
    }

    static func isLarge(_ payloadSize: UInt64) -> Bool {
        payloadSize > UInt64(UInt32.max) - 8
    }
}
