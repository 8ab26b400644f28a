import Synchronization

/// The body bytes (declared or received) of all requests in progress together, against a limit:
/// beyond it a new body is refused with 503 instead of being buffered or spooled.
package final class InflightBudget: Sendable {
    /// The most bytes in flight at once.
    package let limit: Int
    private let used = Atomic<Int>(0)

    /// A budget of `limit` bytes, none used.
    package init(limit: Int) { self.limit = max(0, limit) }

    /// Counts `bytes` more when they fit; false (nothing counted) when they do not. Never goes
    /// past the limit, even for a moment, and never overflows: the sum is checked before it is
    /// stored.
    package func reserve(_ bytes: Int) -> Bool { reserve(bytes, nearlyAloneHolding: nil) }

    /// What the others may hold for a request to pass the limit beside them: a few small bodies in
    /// flight (a slow client's) must not keep the largest accepted request out.
    package var nearlyAlone: Int { limit / 8 }

    /// Counts `bytes` more when they fit, or, past the limit, when all but the caller's own `own`
    /// bytes come to `nearlyAlone` at most: the largest accepted request always gets through, and
    /// two never pass the limit together (the first holds far more than an eighth).
    package func reserve(_ bytes: Int, nearlyAloneHolding own: Int?) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            let (after, overflow) = current.addingReportingOverflow(bytes)
            let alone = own.map { current &- $0 <= nearlyAlone } ?? false
            guard !overflow, after <= limit || alone else { return false }
            let (exchanged, found) = used.compareExchange(
                expected: current, desired: after, ordering: .relaxed)
            if exchanged { return true }
            current = found
        }
    }

    /// Gives back `bytes` reserved earlier.
    package func release(_ bytes: Int) {
        if bytes > 0 { used.subtract(bytes, ordering: .relaxed) }
    }

    /// Bytes reserved right now.
    package var inUse: Int { used.load(ordering: .relaxed) }
}
