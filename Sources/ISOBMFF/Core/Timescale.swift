/// Converts `value` from one timescale to another, rounding to nearest (halves up), without
/// intermediate overflow. Returns nil when `from` is 0 or the result exceeds 64 bits.
public func rescale(_ value: UInt64, from: UInt32, to: UInt32) -> UInt64? {
    guard from != 0 else { return nil }
    if from == to { return value }
    let product = value.multipliedFullWidth(by: UInt64(to))
    let half = UInt64(from / 2)
    let (low, carry) = product.low.addingReportingOverflow(half)
    let high = product.high + (carry ? 1 : 0)  // high < to <= UInt32.max: cannot overflow.
    guard high < UInt64(from) else { return nil }
    return UInt64(from).dividingFullWidth((high, low)).quotient
}

/// Like ``rescale(_:from:to:)`` but rounding up: a duration that must cover all of the
/// media (FFmpeg's movie and track durations are computed so).
public func rescaleRoundingUp(_ value: UInt64, from: UInt32, to: UInt32) -> UInt64? {
    guard from != 0 else { return nil }
    if from == to { return value }
    let product = value.multipliedFullWidth(by: UInt64(to))
    let (low, carry) = product.low.addingReportingOverflow(UInt64(from) - 1)
    let high = product.high + (carry ? 1 : 0)  // high < to <= UInt32.max: cannot overflow.
    guard high < UInt64(from) else { return nil }
    return UInt64(from).dividingFullWidth((high, low)).quotient
}
