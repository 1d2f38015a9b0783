/// A time on a clock of the file: whole ticks together with the timescale (ticks per second)
/// that gives them meaning, as `mvhd`, `mdhd`, `elst`, `stts` and `tfdt` count (ISO/IEC
/// 14496-12 § 8.2.2, § 8.4.2). No time exists here without its timescale.
///
/// Times in files are claims: any 64-bit pattern. So every operation that could leave the
/// range is checked and returns nil instead of trapping, and this file holds the one place
/// where a floating value becomes an integer (``MediaTime/Rounding``, `Int64(exactly:)` of a
/// rounded value): `Scripts/check-time-conversions.py` fails CI on any other
/// `Int(x)`/`UInt64(x)` of a floating value in `Sources`.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Ticks from the clock's origin; negative before it (a composition offset, an edit's
    /// start before the media's).
    public let ticks: Int64
    /// Ticks per second; never 0.
    public let timescale: UInt32

    /// `ticks` of a `timescale` clock; nil when the timescale is 0 or the count does not fit
    /// in a signed 64-bit number (an unsigned duration a file claims past 2^63 − 1).
    public init?<T: BinaryInteger>(ticks: T, timescale: UInt32) {
        guard timescale > 0, let ticks = Int64(exactly: ticks) else { return nil }
        self.ticks = ticks
        self.timescale = timescale
    }

    /// How a time that falls inside a tick becomes whole ticks.
    public enum Rounding: Sendable {
        /// To the nearest tick (halves away from zero).
        case nearest
        /// To the start of the tick the time falls in: the tick presented at that time.
        case down
        /// To the end of the tick the time falls in: every tick that starts before the time.
        case up

        var rule: FloatingPointRoundingRule {
            switch self {
            case .nearest: .toNearestOrAwayFromZero
            case .down: .down
            case .up: .up
            }
        }
    }

    /// `seconds` in ticks of `timescale`, rounded as `rounding` says; nil for NaN, an
    /// infinity, a timescale of 0, or a count past 64 bits.
    public init?(seconds: Double, timescale: UInt32, rounding: Rounding = .nearest) {
        guard let ticks = Self.integer(seconds * Double(timescale), rounding: rounding) else { return nil }
        self.init(ticks: ticks, timescale: timescale)
    }

    /// The time nearest `seconds` that this clock can count: 0 for a negative time or NaN, the
    /// largest for one past 2^63 − 1 ticks. For times a file claims (a chapter's start), which
    /// may be anything: never a trap. Nil only for a timescale of 0.
    public init?(clampingSeconds seconds: Double, timescale: UInt32, rounding: Rounding = .nearest) {
        let scaled = seconds * Double(timescale)
        let ticks = scaled.isNaN || scaled <= 0 ? 0 : Self.integer(scaled, rounding: rounding) ?? .max
        self.init(ticks: ticks, timescale: timescale)
    }

    /// The one conversion of a floating value to an integer in the package: `value` rounded,
    /// when it is a finite value inside the range of `Int64`; nil otherwise. Never traps.
    public static func integer(_ value: Double, rounding: Rounding = .nearest) -> Int64? {
        guard value.isFinite else { return nil }
        // Int64(exactly:) is nil for 2^63 and beyond (not representable), never a trap.
        return Int64(exactly: value.rounded(rounding.rule))
    }

    /// The time in seconds (for reports and messages; not exact past 2^53 ticks).
    public var seconds: Double { Double(ticks) / Double(timescale) }

    /// `ticks` of a `timescale` clock in seconds, for any unsigned count a file claims: 0 for a
    /// timescale of 0 (a clock that does not run), never a trap.
    public static func seconds(_ ticks: UInt64, timescale: UInt32) -> Double {
        timescale == 0 ? 0 : Double(ticks) / Double(timescale)
    }

    /// The same time in ticks of `timescale`, rounded as `rounding` says; nil for a timescale
    /// of 0 or a result past 64 bits. Exact in 128-bit arithmetic.
    public func rescaled(to timescale: UInt32, rounding: Rounding = .nearest) -> MediaTime? {
        guard timescale > 0 else { return nil }
        if timescale == self.timescale { return self }
        // Round the magnitude; the direction of .down and .up flips for negative times.
        let negative = ticks < 0
        let magnitudeRounding: Rounding = switch (rounding, negative) {
        case (.nearest, _): .nearest
        case (.down, false), (.up, true): .down
        case (.up, false), (.down, true): .up
        }
        guard let magnitude = Self.scale(ticks.magnitude, by: UInt64(timescale), over: UInt64(self.timescale),
                                         rounding: magnitudeRounding) else { return nil }
        if negative {
            // −2^63 is the one negative value whose magnitude does not fit in Int64.
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return MediaTime(ticks: magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude),
                             timescale: timescale)
        }
        return MediaTime(ticks: magnitude, timescale: timescale)
    }

    /// `self + other`, in this time's timescale (`other` rescaled to the nearest tick); nil
    /// when the sum leaves 64 bits.
    public func adding(_ other: MediaTime) -> MediaTime? {
        guard let other = other.rescaled(to: timescale) else { return nil }
        let (sum, overflow) = ticks.addingReportingOverflow(other.ticks)
        return overflow ? nil : MediaTime(ticks: sum, timescale: timescale)
    }

    /// `self − other`, in this time's timescale (`other` rescaled to the nearest tick); nil
    /// when the difference leaves 64 bits.
    public func subtracting(_ other: MediaTime) -> MediaTime? {
        guard let other = other.rescaled(to: timescale) else { return nil }
        let (difference, overflow) = ticks.subtractingReportingOverflow(other.ticks)
        return overflow ? nil : MediaTime(ticks: difference, timescale: timescale)
    }

    /// Compares the times exactly, whatever their timescales: `a/A < b/B` as `a·B < b·A` in
    /// 128 bits.
    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        let left = a.ticks.multipliedFullWidth(by: Int64(b.timescale))
        let right = b.ticks.multipliedFullWidth(by: Int64(a.timescale))
        return (left.high, left.low) < (right.high, right.low)
    }

    /// The same instant, whatever the timescales (1 s at 1000 equals 1 s at 48000).
    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        a.ticks.multipliedFullWidth(by: Int64(b.timescale)) == b.ticks.multipliedFullWidth(by: Int64(a.timescale))
    }

    public func hash(into hasher: inout Hasher) {
        // Equal instants hash alike: the fraction in lowest terms.
        var (a, b) = (ticks.magnitude, UInt64(timescale))
        while b != 0 { (a, b) = (b, a % b) }
        hasher.combine(ticks < 0)
        hasher.combine(ticks.magnitude / a)
        hasher.combine(UInt64(timescale) / a)
    }

    /// `2.520 s` style: ``MediaTime/text(seconds:decimals:)`` with three decimals.
    public var description: String { Self.text(seconds: seconds) + " s" }

    /// `value × multiplier / divisor`, rounded, exact in 128 bits; nil for a divisor of 0 or a
    /// result past 64 bits. The one rescaling rule of the package (``rescale(_:from:to:)``,
    /// ``CutTime/ticks(_:rounding:)``).
    static func scale(_ value: UInt64, by multiplier: UInt64, over divisor: UInt64, rounding: Rounding) -> UInt64? {
        guard divisor > 0 else { return nil }
        let product = value.multipliedFullWidth(by: multiplier)
        let bias: UInt64 = switch rounding {
        case .nearest: divisor / 2
        case .down: 0
        case .up: divisor - 1
        }
        let (low, carry) = product.low.addingReportingOverflow(bias)
        let (high, overflow) = product.high.addingReportingOverflow(carry ? 1 : 0)
        guard !overflow, high < divisor else { return nil }
        return divisor.dividingFullWidth((high, low)).quotient
    }
}

// MARK: - Times as text

extension MediaTime {
    /// `seconds` with `decimals` decimals (`2.520`), rounded to nearest; a value that is not
    /// finite or lies past 10^15 s is printed as Swift prints it. The one formatter of times in
    /// the package: reports, `--json`, messages. Never traps.
    public static func text(seconds value: Double, decimals: Int = 3) -> String {
        let decimals = min(max(decimals, 0), 9)
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }  // ≤ 10^9.
        guard value.isFinite, value.magnitude < 1e15,
              let scaled = integer(value.magnitude * Double(scale)) else { return "\(value)" }
        let whole = scaled / scale
        var fraction = String(scaled % scale)
        fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
        return (value < 0 && scaled > 0 ? "-" : "") + "\(whole)" + (decimals > 0 ? "." + fraction : "")
    }

    /// `HH:MM:SS.mmm`, as mp4chaps and FFmpeg's chapter metadata write a start; a negative
    /// time is 00:00:00.000, and one that is not finite or lies past 10^12 s (about 31,700
    /// years: a claim, not a time) is printed as Swift prints it, with " s".
    public static func clock(seconds value: Double) -> String {
        guard value.isFinite, value < 1e12, let milliseconds = integer(max(0, value) * 1000) else {
            return "\(value) s"
        }
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = milliseconds % 1000
        return "\(two(milliseconds / 3_600_000)):\(two(milliseconds / 60_000 % 60)):\(two(milliseconds / 1000 % 60))."
            + (ms < 10 ? "00" : ms < 100 ? "0" : "") + "\(ms)"
    }
}
