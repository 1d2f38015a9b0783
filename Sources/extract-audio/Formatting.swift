/// `value` with `digits` decimals, without Foundation.
func formatted(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e18 else { return "\(value)" }
    let whole = Int(scaled) / Int(scale)
    var fraction = String(Int(scaled) % Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return (value < 0 ? "-" : "") + "\(whole)" + (digits > 0 ? "." + fraction : "")
}

extension String {
    /// Whether `other` occurs in this string, compared byte for byte in UTF-8.
    ///
    /// `String.contains(_: String)` without Foundation comes from _StringProcessing, which
    /// needs macOS 13 / iOS 16 (Scripts/availability/check.py flags it). O(n·m), for short
    /// texts such as messages and paths.
    func containsBytes(of other: String) -> Bool {
        let text = Array(utf8)
        let part = Array(other.utf8)
        guard part.count <= text.count else { return false }
        return (0...(text.count - part.count)).contains { start in
            text[start..<(start + part.count)].elementsEqual(part)
        }
    }
}
