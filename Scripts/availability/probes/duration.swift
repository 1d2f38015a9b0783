// Availability probe (not part of any target): Duration is macOS 13 / iOS 16.
// Scripts/availability/check.py must flag it.

func probeDuration() -> Duration {
    .seconds(2)
}
