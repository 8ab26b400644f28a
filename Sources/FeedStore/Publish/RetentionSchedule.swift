import ConcurrencyPrimitives

/// Remembers, per group, when retention last scanned `generations/`, so that a burst of
/// publishes pays for one folder scan per interval instead of one per publish (a scan costs
/// time in proportion to the generations lingering in their grace period).
final class RetentionSchedule: Sendable {
    private let lastSweep = Lock<[String: Int64]>([:])

    /// Whether a sweep of `group` is due at `now`; claims it (records `now`) when it is.
    func claimSweep(of group: String, now: Int64, interval: Int64) -> Bool {
        lastSweep.withLock { sweeps in
            if let last = sweeps[group], now - last < interval, now >= last { return false }
            sweeps[group] = now
            return true
        }
    }

    /// Makes the next publish to `group` sweep, whenever the last sweep was (the fault lab left
    /// something there for it to clean up).
    func forget(_ group: String) {
        _ = lastSweep.withLock { $0.removeValue(forKey: group) }
    }
}
