// Availability probe (not part of any target): a newer initializer on an old type.
// String(validating:as:) (SE-0405) is macOS 15 / iOS 18, though String is as old as Swift.
// Scripts/availability/check.py must flag it.

func probeStringValidating(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)
}
