/// Reads a byte slice bit by bit, most significant bit first, as every video bitstream
/// syntax in this folder is written (ITU-T H.264 § 7.2 `read_bits`, AV1 § 4.10.1 `f(n)`).
///
/// Every read past the end returns nil instead of trapping: the bytes come from a file.
struct BitReader {
    private let bytes: ArraySlice<UInt8>
    /// Bits consumed so far, counted from `bytes.startIndex`.
    private var position = 0
    /// The number of bits in `bytes` (capped at `Int.max` for a slice too large to count).
    private let bitCount: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        let (bits, overflow) = bytes.count.multipliedReportingOverflow(by: 8)
        bitCount = overflow ? Int.max : bits
    }

    /// The bits not yet read.
    var bitsLeft: Int { bitCount - position }

    /// Reads one bit.
    mutating func bit() -> UInt32? {
        guard position < bitCount else { return nil }
        // position < bitCount = 8 × count, so position / 8 < count: in range.
        let byte = bytes[bytes.startIndex + position / 8]
        let value = UInt32(byte >> (7 - UInt8(position % 8)) & 1)
        position += 1
        return value
    }

    /// Reads `count` bits (0...32) as an unsigned number.
    mutating func bits(_ count: Int) -> UInt32? {
        guard (0...32).contains(count), count <= bitsLeft else { return nil }
        var value: UInt64 = 0
        for _ in 0..<count {
            guard let next = bit() else { return nil }
            value = value << 1 | UInt64(next)
        }
        return UInt32(truncatingIfNeeded: value)  // At most 32 bits were shifted in.
    }

    /// Skips `count` bits; false when fewer are left.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= bitsLeft else { return false }
        position += count
        return true
    }

    /// Reads an unsigned Exp-Golomb code, `ue(v)` (ITU-T H.264 § 9.1): nil past the end or
    /// for a code longer than 32 bits of value.
    mutating func unsignedExpGolomb() -> UInt32? {
        var leadingZeros = 0
        while true {
            guard let next = bit() else { return nil }
            if next == 1 { break }
            leadingZeros += 1
            guard leadingZeros < 32 else { return nil }
        }
        guard let suffix = bits(leadingZeros) else { return nil }
        // leadingZeros < 32: (1 << leadingZeros) - 1 + suffix < 2^33, computed in 64 bits.
        return UInt32(exactly: (UInt64(1) << UInt64(leadingZeros)) - 1 + UInt64(suffix))
    }

    /// Reads a signed Exp-Golomb code, `se(v)` (ITU-T H.264 § 9.1.1: code k gives
    /// (−1)^(k+1) × ⌈k ÷ 2⌉): nil where `ue(v)` is.
    mutating func signedExpGolomb() -> Int64? {
        guard let code = unsignedExpGolomb() else { return nil }
        // code < 2^32: its half plus one fits an Int64 either way.
        let magnitude = Int64(code / 2) + Int64(code % 2)
        return code % 2 == 1 ? magnitude : -magnitude
    }
}

/// Start-code and escaping helpers shared by the codecs whose bitstreams escape start
/// code emulation (H.264 § 7.4.1, HEVC § 7.4.2, VC-1 SMPTE 421M Annex E).
enum Bitstream {
    /// The RBSP of `bytes` (at most `limit` bytes of it): `bytes` with each
    /// emulation_prevention_three_byte (a 0x03 after two zero bytes) removed.
    static func unescaped(_ bytes: ArraySlice<UInt8>, limit: Int) -> ArraySlice<UInt8> {
        var out: [UInt8] = []
        out.reserveCapacity(Swift.min(bytes.count, Swift.max(0, limit)))
        var zeros = 0
        for byte in bytes {
            guard out.count < limit else { break }
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out[...]
    }

    /// The offset in `bytes` of the first byte after the next `00 00 01` at or after `from`,
    /// looking no further than `limit` bytes past `bytes.startIndex`; nil when there is none.
    static func nextStartCode(in bytes: ArraySlice<UInt8>, from: Int, limit: Int) -> Int? {
        let end = bytes.count - limit > 0 ? bytes.startIndex + limit : bytes.endIndex
        var index = Swift.max(from, bytes.startIndex)
        // index + 2 < end keeps the three reads in range.
        while end - index > 2 {
            if bytes[index + 2] > 1 {
                index += 3
            } else if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 {
                return index + 3
            } else {
                index += 1
            }
        }
        return nil
    }
}
