import ISOBMFF

/// `value` with `digits` decimals (``MediaTime/text(seconds:decimals:)``, the one formatter).
func formatted(_ value: Double, digits: Int) -> String {
    MediaTime.text(seconds: value, decimals: digits)
}
