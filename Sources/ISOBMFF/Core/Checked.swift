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
