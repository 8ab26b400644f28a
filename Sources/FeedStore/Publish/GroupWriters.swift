import ConcurrencyPrimitives

/// The groups a writer of this process holds, so that this process's writers of one group queue
/// on a condition and the next is woken the moment the lock is let go. `flock` has no timed wait
/// and is polled: two writers of this process meeting only there would sleep 0.5–10 ms between
/// looks. The file lock is still taken after a claim: it is what excludes other processes.
final class GroupWriters: @unchecked Sendable {
    // Guards `held`.
    private let condition = ConditionLock()
    /// Group folders claimed now: one entry per writer at work, so the set stays as small as that.
    private var held: Set<String> = []

    /// Claims `group` for the caller unless another writer of this process holds it until
    /// `deadline` (monotonic nanoseconds); false then, and nothing is claimed.
    func claim(_ group: String, until deadline: Int64) -> Bool {
        condition.withLock {
            while held.contains(group) {
                if !condition.wait(untilNanos: deadline), held.contains(group) { return false }
            }
            held.insert(group)
            return true
        }
    }

    /// Lets `group` go; a writer waiting for it takes it.
    func release(_ group: String) {
        condition.withLock { _ = held.remove(group) }
        // Every waiter looks: waiters for other groups go back to sleep (writers are few).
        condition.broadcast()
    }
}

/// A group's file lock together with this process's claim on the group, let go in that order.
final class ClaimedGroupLock: FileLock, @unchecked Sendable {
    private let fileLock: any FileLock
    private let writers: GroupWriters
    private let group: String
    // Only the writer that took the lock unlocks it (once; a second call does nothing).
    private var released = false

    init(_ fileLock: any FileLock, writers: GroupWriters, group: String) {
        (self.fileLock, self.writers, self.group) = (fileLock, writers, group)
    }

    func unlock() {
        guard !released else { return }
        released = true
        fileLock.unlock()
        writers.release(group)
    }
}
