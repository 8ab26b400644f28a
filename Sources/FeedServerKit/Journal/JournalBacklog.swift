import ConcurrencyPrimitives

/// Tickets of journal entries promised but not yet appended. A write's entry is appended after
/// its answer is handed to the transport, so that the append is not part of the write's latency;
/// the ticket, issued before the answer, lets a journal read wait for every write answered
/// before it arrived.
struct PendingEntries: Equatable {
    /// The last ticket issued (0: none yet).
    private(set) var issued: UInt64 = 0
    /// Tickets issued and not yet closed: one per write between its answer and its append.
    private(set) var open: Set<UInt64> = []

    /// A new ticket, open until `close`.
    mutating func issue() -> UInt64 {
        issued += 1
        open.insert(issued)
        return issued
    }

    /// The ticket's entry was appended, or given up on.
    mutating func close(_ ticket: UInt64) {
        open.remove(ticket)
    }

    /// Whether every entry issued up to `mark` is closed.
    func isSettled(through mark: UInt64) -> Bool {
        !open.contains { $0 <= mark }
    }
}

/// `PendingEntries` shared by the threads that answer writes and the ones that read the journal.
final class JournalBacklog: @unchecked Sendable {
    private let lock = ConditionLock()
    /// Guarded by `lock`.
    private var state = PendingEntries()

    /// A ticket for an entry about to be promised; close it whatever becomes of the entry.
    func issue() -> UInt64 {
        lock.withLock { state.issue() }
    }

    /// Closes `ticket` and wakes readers waiting for it.
    func close(_ ticket: UInt64) {
        lock.withLock {
            state.close(ticket)
            lock.broadcast()
        }
    }

    /// Waits until every entry promised before this call is appended, or until `deadlineNanos`
    /// (monotonic); false when the deadline came first.
    @discardableResult
    func settle(untilNanos deadlineNanos: Int64) -> Bool {
        lock.withLock {
            let mark = state.issued
            while !state.isSettled(through: mark) {
                if !lock.wait(untilNanos: deadlineNanos) { return state.isSettled(through: mark) }
            }
            return true
        }
    }
}
