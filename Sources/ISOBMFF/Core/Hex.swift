extension FixedWidthInteger where Self: UnsignedInteger {
    /// The value in hexadecimal, zero-padded on the left to `digits` (by default two per
    /// byte of the type: `0x0A` as a `UInt8` is `0a`), never cut: the one formatting of
    /// bytes and fields as hex in messages, codec strings and tag text.
    package func hexDigits(_ digits: Int = Self.bitWidth / 4, uppercase: Bool = false) -> String {
        let text = String(self, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: Swift.max(0, digits - text.count)) + text
    }
}
