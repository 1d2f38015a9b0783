// Availability probe (not part of any target): the same Mutex as mutex.swift, but used
// only under `if #available`, and allowlisted (allowlist.txt) with that guard.
// Scripts/availability/check.py must NOT flag it: this shows the allowlist at work.
import Synchronization

func probeGuarded() -> Int {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        let counter = Mutex(1)
        return counter.withLock { $0 }
    }
    return 1
}
