/// Converts `value` from one timescale to another, rounding to nearest (halves up), without
/// intermediate overflow. Returns nil when `from` is 0 or the result exceeds 64 bits.
public func rescale(_ value: UInt64, from: UInt32, to: UInt32) -> UInt64? {
    from == to && from != 0 ? value : MediaTime.scale(value, by: UInt64(to), over: UInt64(from), rounding: .nearest)
}

/// Like ``rescale(_:from:to:)`` but rounding up: a duration that must cover all of the
/// media (FFmpeg's movie and track durations are computed so).
public func rescaleRoundingUp(_ value: UInt64, from: UInt32, to: UInt32) -> UInt64? {
    from == to && from != 0 ? value : MediaTime.scale(value, by: UInt64(to), over: UInt64(from), rounding: .up)
}

/// The movie timescale that makes the edits of tracks of `timescales` exact where it can:
/// their least common multiple when it is at most 2^31 − 1, else the largest of them; nil
/// when none is above 0.
///
/// FFmpeg reads the `mvhd` timescale as a signed 32-bit number: past 2^31 − 1 it is negative
/// ("Invalid mvhd time scale") and the movie's duration absurd, so a larger multiple is not
/// written; the largest track timescale then keeps the longest-tick track exact and rounds
/// the others' edits by less than one of its ticks (``MovieWriter`` reports the worst).
public func movieTimescale(forTracksOf timescales: some Sequence<UInt32>) -> UInt32? {
    let limit = UInt64(Int32.max)
    var lcm: UInt64 = 1
    var largest: UInt32 = 0
    var fits = true
    for timescale in timescales where timescale > 0 {
        largest = max(largest, timescale)
        guard fits else { continue }
        var (a, b) = (lcm, UInt64(timescale))
        while b != 0 { (a, b) = (b, a % b) }
        // lcm ≤ 2^31 and timescale < 2^32: the product stays below 2^63.
        lcm = lcm / a * UInt64(timescale)
        fits = lcm <= limit
    }
    guard largest > 0 else { return nil }
    return fits ? UInt32(lcm) : largest
}

/// How far `written`, segment durations in `writtenTimescale`, is from presenting `exact`,
/// the same segments in `exactTimescale`, at worst over the segments: in seconds, 0 when
/// the lists differ in length or a timescale is 0 (nothing to compare).
public func worstEditRounding(of written: [EditListBox.Entry], in writtenTimescale: UInt32,
                              from exact: [EditListBox.Entry], in exactTimescale: UInt32) -> Double {
    guard written.count == exact.count, writtenTimescale > 0, exactTimescale > 0 else { return 0 }
    var worst = 0.0
    for (w, e) in zip(written, exact) {
        // Exact integer difference of w/W − e/E = (w·E − e·W) / (W·E), in 128 bits.
        let a = w.segmentDuration.multipliedFullWidth(by: UInt64(exactTimescale))
        let b = e.segmentDuration.multipliedFullWidth(by: UInt64(writtenTimescale))
        let larger = a > b ? a : b
        let smaller = a > b ? b : a
        let (low, borrow) = larger.low.subtractingReportingOverflow(smaller.low)
        let high = larger.high &- smaller.high &- (borrow ? 1 : 0)  // larger ≥ smaller: no wrap.
        let difference = Double(high) * 18_446_744_073_709_551_616.0 + Double(low)
        worst = max(worst, difference / (Double(writtenTimescale) * Double(exactTimescale)))
    }
    return worst
}
