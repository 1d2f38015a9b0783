/// Arithmetic on values that come from files. Swift traps on overflow, so every sum and
/// product steered by file contents goes through these helpers, which throw instead.
@inlinable
func checkedAdd(_ a: UInt64, _ b: UInt64, _ error: @autoclosure () -> ISOBMFFError) throws -> UInt64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    if overflow { throw error() }
    return sum
}

@inlinable
func checkedMultiply(_ a: UInt64, _ b: UInt64, _ error: @autoclosure () -> ISOBMFFError) throws -> UInt64 {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    if overflow { throw error() }
    return product
}

extension Sequence<UInt64> {
    /// The sum, or `UInt64.max` when it does not fit: for durations that a file only claims,
    /// where wrapping would turn days into seconds. The one saturating sum of durations
    /// (edit lists, movie and track headers).
    public var saturatingSum: UInt64 {
        reduce(0) { total, value in
            let (sum, overflow) = total.addingReportingOverflow(value)
            return overflow ? .max : sum
        }
    }
}
