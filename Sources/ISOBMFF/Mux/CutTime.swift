/// A point in a movie's presentation, as a cut names it: whole nanoseconds from the start.
///
/// Written as seconds (`90`, `2.52`) or as `[[h:]m:]s[.frac]` (`1:30`, `01:02:03.5`); the
/// fraction keeps up to nine digits (nanoseconds), further digits are refused rather than
/// rounded away.
public struct CutTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds from the start of the presentation.
    public var nanoseconds: UInt64

    /// The time `nanoseconds` after the start.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The time as seconds, for messages and reports.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// The time nearest `seconds` that a `CutTime` can hold: 0 for a negative time or NaN,
    /// the largest (about 292 years) for one past it. For times a file claims (a chapter's
    /// start), which may be anything: never a trap.
    public init(clampingSeconds seconds: Double) {
        // A nanosecond clock always exists (the timescale is not 0) and clamps at 0 and 2^63 − 1.
        let time = MediaTime(clampingSeconds: seconds, timescale: 1_000_000_000)
        self.init(nanoseconds: time.map { UInt64($0.ticks) } ?? 0)  // ticks ≥ 0 when clamped.
    }

    /// Parses `90`, `2.52`, `1:30`, `1:02:03.5`: seconds, or minutes and seconds, or hours,
    /// minutes and seconds; minutes and seconds after a colon are below 60.
    ///
    /// Throws `.invalidValue`, naming the text, for anything else (signs, exponents, a comma,
    /// empty fields, more than nine fraction digits, overflow): a typo never becomes a
    /// default such as "to the end".
    public init(parsing text: String) throws(ISOBMFFError) {
        guard let nanoseconds = Self.nanoseconds(parsing: text) else {
            throw ISOBMFFError(.invalidValue, "'\(text)' is not a time: write seconds (90, 2.52) or [[h:]m:]s[.frac] "
                               + "(1:30, 01:02:03.5)", path: "", offset: nil)
        }
        self.init(nanoseconds: nanoseconds)
    }

    /// The nanoseconds `text` names, or nil (see ``init(parsing:)``).
    private static func nanoseconds(parsing text: String) -> UInt64? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var total: UInt64 = 0
        for (n, field) in fields.enumerated() {
            let isLast = n == fields.count - 1
            let parts = field.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 1 || (isLast && parts.count == 2) else { return nil }
            let whole = parts[0]
            guard !whole.isEmpty, whole.count <= 12, whole.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = UInt64(whole) else { return nil }
            if n > 0 && value >= 60 { return nil }
            var fraction: UInt64 = 0
            if parts.count == 2 {
                let digits = parts[1]
                guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                      let read = UInt64(digits) else { return nil }
                fraction = read
                for _ in digits.count..<9 { fraction *= 10 }  // < 10^9: no overflow.
            }
            // At most 12 digits per field (< 10^12) times 60 and 10^9: checked below.
            let (scaled, o1) = total.multipliedReportingOverflow(by: 60)
            let (sum, o2) = scaled.addingReportingOverflow(value)
            guard !o1, !o2 else { return nil }
            total = sum
            if isLast {
                let (ns, o3) = total.multipliedReportingOverflow(by: 1_000_000_000)
                let (withFraction, o4) = ns.addingReportingOverflow(fraction)
                guard !o3, !o4 else { return nil }
                return withFraction
            }
        }
        return nil
    }

    /// How ``ticks(_:rounding:)`` rounds a time that falls inside a tick.
    public typealias Rounding = MediaTime.Rounding

    /// The time in ticks of `timescale`, rounded as `rounding` says (to the nearest tick by
    /// default); nil when it does not fit in 64 bits or the timescale is 0.
    public func ticks(_ timescale: UInt32, rounding: Rounding = .nearest) -> UInt64? {
        MediaTime.scale(nanoseconds, by: UInt64(timescale), over: 1_000_000_000, rounding: rounding)
    }

    /// `2.520` style: seconds with three decimals (more when the time needs them).
    public var description: String {
        let whole = nanoseconds / 1_000_000_000
        var fraction = String(nanoseconds % 1_000_000_000)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.count > 3 && fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }

    public static func < (a: CutTime, b: CutTime) -> Bool { a.nanoseconds < b.nanoseconds }
}

/// The part of a presentation to keep: `[from, to)`, `to` nil for "to the end".
public struct CutRange: Sendable, Hashable {
    /// Where the output starts.
    public var from: CutTime
    /// Where it ends (excluded); nil for the end of the input.
    public var to: CutTime?

    /// The range `[from, to)`.
    public init(from: CutTime = CutTime(nanoseconds: 0), to: CutTime? = nil) {
        self.from = from
        self.to = to
    }
}
