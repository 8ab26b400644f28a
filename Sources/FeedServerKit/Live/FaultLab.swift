import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// Injects the fault lab's faults (on the work pool: each waits for its group's lock) and times
/// the slow publishes' holds.
///
/// A hold is an object (`HeldPublish`: the group's lock and its `.tmp` folder), not a waiting
/// thread: one timer thread, started with the first hold, finishes every hold when it is due, so
/// holds cost no thread each and no pool worker waits one out. A fault that finds its group held
/// longer than it may wait is refused at once with the hold's end (409, `Retry-After`); one that
/// finds the lock taken by another writer waits `lockWait` at most.
final class FaultLab: @unchecked Sendable {
    /// Longest wait for a group's lock: enough for an ordinary publish to finish, short enough
    /// that faults queued behind a writer cannot occupy the work pool for long.
    static let lockWaitNanos: Int64 = 1_000_000_000

    private struct Hold {
        let publish: HeldPublish
        /// Monotonic nanoseconds.
        let deadline: Int64
        let untilEpochMs: Int64
    }

    // Guards every member below; the timer waits on it.
    private let condition = ConditionLock()
    private var holds: [String: Hold] = [:]
    /// Holds taken off `holds` whose `finish()` is running.
    private var finishing = 0
    private var stopping = false
    private var timerStarted = false
    private let clock: any FeedClock

    init(clock: any FeedClock = SystemClock()) {
        self.clock = clock
    }

    /// Injects `request` into `group` and says what readers get now; a `slow-publish` is
    /// answered at its start, with what readers get during its hold of `seconds`.
    func inject(
        store: FeedStore, _ request: FaultRequest, group: String, seconds: Int?
    ) throws(Problem) -> FaultOutcome {
        // A hold about to end is waited for (and the wait after it, for its rename and pointer).
        let wait = Self.lockWaitNanos + (try refuseIfHeld(group) ?? 0)
        if request.kind == .slowPublish {
            // Before anything is written: a hold nobody would finish must not begin.
            do { try startTimer() } catch { throw Problem.threadUnavailable(error) }
        }
        do throws(FaultError) {
            guard request.kind == .slowPublish else {
                return try store.injectFault(request, group: group, lockWaitNanos: wait)
            }
            let held = try store.beginSlowPublish(request, group: group, lockWaitNanos: wait)
            hold(held, seconds: seconds ?? 0)
            return held.outcome
        } catch .groupLocked(_) {
            // The hold may have begun while this waited.
            try refuseIfHeld(group, waited: true)
            throw Problem.groupLocked(group, waitedSeconds: Int((wait + 999_999_999) / 1_000_000_000))
        } catch {
            throw Problem(error)
        }
    }

    /// A 409 naming the hold when `group` is held longer than a write waits for its lock
    /// (`waitNanos`): a publish, delete or restore refused at once, rather than holding a
    /// work-pool thread for the whole wait to be refused after it.
    func refuseWrites(to group: String, waitNanos: Int64) throws(Problem) {
        _ = try refuseIfHeld(group, longerThan: waitNanos)
    }

    /// A 409 naming the hold when `group` is held past the time a fault may wait (or at all,
    /// once it has waited); otherwise what is left of a hold, in nanoseconds (nil: none).
    @discardableResult
    private func refuseIfHeld(_ group: String, waited: Bool = false) throws(Problem) -> Int64? {
        try refuseIfHeld(group, longerThan: waited ? -1 : Self.lockWaitNanos)
    }

    /// A 409 naming the hold when `group` is held more than `nanos` longer; otherwise what is
    /// left of a hold, in nanoseconds (nil: none).
    private func refuseIfHeld(_ group: String, longerThan nanos: Int64) throws(Problem) -> Int64? {
        let hold = condition.withLock { holds[group] }
        guard let hold else { return nil }
        let remaining = max(0, hold.deadline - MonotonicClock.nanos())
        guard remaining > nanos else { return remaining }
        throw Problem.groupHeld(
            group, generationId: hold.publish.generationId, untilEpochMs: hold.untilEpochMs,
            remainingSeconds: Int((remaining + 999_999_999) / 1_000_000_000))
    }

    private func hold(_ publish: HeldPublish, seconds: Int) {
        let registered = condition.withLock {
            // After a shutdown began the timer may be gone: the caller finishes it at once.
            guard !stopping else { return false }
            let nanos = Int64(seconds) * 1_000_000_000
            holds[publish.group] = Hold(
                publish: publish, deadline: MonotonicClock.nanos() + nanos,
                untilEpochMs: clock.nowEpochMs() + Int64(seconds) * 1000)
            condition.broadcast()
            return true
        }
        if !registered { finish(publish) }
    }

    private func startTimer() throws(ThreadStartError) {
        let start = condition.withLock {
            defer { timerStarted = true }
            return !timerStarted && !stopping
        }
        guard start else { return }
        do {
            try DetachedThread.start(name: "feed-fault-lab") { [self] in runTimer() }
        } catch {
            condition.withLock { timerStarted = false }
            throw error
        }
    }

    /// Finishes each hold when due, every one at once when stopping; ends when stopping leaves none.
    private func runTimer() {
        while true {
            let due: [HeldPublish] = condition.withLock {
                while true {
                    let now = MonotonicClock.nanos()
                    let ready = holds.filter { stopping || $0.value.deadline <= now }
                    if !ready.isEmpty {
                        for group in ready.keys { holds[group] = nil }
                        finishing += ready.count
                        return ready.values.map(\.publish)
                    }
                    if stopping { return [] }
                    if let next = holds.values.map(\.deadline).min() {
                        condition.wait(untilNanos: next)
                    } else {
                        condition.wait()
                    }
                }
            }
            if due.isEmpty { return }
            for publish in due { finish(publish, counted: true) }
        }
    }

    private func finish(_ publish: HeldPublish, counted: Bool = false) {
        if case .failure(let error) = publish.finish() {
            AccessLog.message("fault lab: slow-publish to \(publish.group) failed after its hold: \(error)")
        }
        guard counted else { return }
        condition.withLock {
            finishing -= 1
            condition.broadcast()
        }
    }

    /// Ends every hold now (shutdown); the held publishes then complete, on the timer thread.
    func stopHolding() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    /// Waits until no held publish is left to complete, or `deadline` (monotonic nanoseconds) has passed.
    func waitForPublishes(until deadline: Int64) {
        condition.withLock {
            while !holds.isEmpty || finishing > 0 {
                if !condition.wait(untilNanos: deadline) { return }
            }
        }
    }
}
