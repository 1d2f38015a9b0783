// Availability probe (not part of any target): Int128 is macOS 15 / iOS 18.
// Scripts/availability/check.py must flag it.

func probeInt128(_ value: Int64) -> Int128 {
    Int128(value) * Int128(value)
}
