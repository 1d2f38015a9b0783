// Availability probe (not part of any target): Synchronization's Mutex is macOS 15 / iOS 18.
// Scripts/availability/check.py must flag it.
import Synchronization

func probeMutex() -> Int {
    let counter = Mutex(0)
    return counter.withLock { value in
        value += 1
        return value
    }
}
