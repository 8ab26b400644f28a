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
    package func reserve(_ bytes: Int) -> Bool { reserve(bytes, orAloneHolding: nil) }

    /// Counts `bytes` more when they fit, or when the only bytes counted now are the caller's
    /// `own`: one request alone always goes ahead, however much it needs.
    package func reserve(_ bytes: Int, orAloneHolding own: Int?) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            let (after, overflow) = current.addingReportingOverflow(bytes)
            guard !overflow, after <= limit || current == own else { return false }
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
