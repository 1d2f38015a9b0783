// Availability probe (not part of any target): ContinuousClock is macOS 13 / iOS 16.
// Scripts/availability/check.py must flag it.

func probeContinuousClock() -> ContinuousClock.Instant {
    ContinuousClock().now
}
