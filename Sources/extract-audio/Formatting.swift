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
