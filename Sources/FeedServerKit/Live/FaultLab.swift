import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the fault lab's slow publishes: each on its own thread, holding its group's lock and
/// its `.tmp` folder for the seconds asked, so the request that started it is answered at once
/// (while readers can be watched) and no HTTP worker waits out the hold.
final class FaultLab: @unchecked Sendable {
    // Guards `stopping` and `running`; holds wait on it so a shutdown can cut them short.
    private let condition = ConditionLock()
    private var stopping = false
    private var running = 0

    /// Starts a slow publish and returns what readers get while its `.tmp` folder is held (or
    /// why it could not start); the rename and pointer switch follow after `seconds`.
    func slowPublish(
        store: FeedStore, _ request: FaultRequest, group: String, seconds: Int?
    ) throws(ThreadStartError)
        -> Result<FaultOutcome, FaultError>
    {
        let handoff = Handoff()
        condition.withLock { running += 1 }
        do {
            try start(store: store, request, group: group, seconds: seconds, handoff: handoff)
        } catch {
            finished()
            throw error
        }
        return handoff.wait()
    }

    private func start(
        store: FeedStore, _ request: FaultRequest, group: String, seconds: Int?, handoff: Handoff
    )
        throws(ThreadStartError)
    {
        try DetachedThread.start { [self] in
            defer { finished() }
            do throws(FaultError) {
                _ = try store.injectFault(request, group: group) { outcome in
                    handoff.deliver(.success(outcome))
                    hold(seconds: seconds ?? 0)
                }
            } catch {
                if !handoff.deliver(.failure(error)) {
                    AccessLog.message("fault lab: slow-publish to \(group) failed after its hold: \(error)")
                }
            }
        }
    }

    /// Ends every hold now (shutdown); the held publishes then complete.
    func stopHolding() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    /// Waits until no slow publish is running, or `deadline` (monotonic nanoseconds) has passed.
    func waitForPublishes(until deadline: Int64) {
        while MonotonicClock.nanos() < deadline {
            if condition.withLock({ running }) == 0 { return }
            usleep(5_000)
        }
    }

    private func hold(seconds: Int) {
        let deadline = MonotonicClock.nanos() + Int64(seconds) * 1_000_000_000
        condition.withLock {
            while !stopping, condition.wait(untilNanos: deadline) {}
        }
    }

    private func finished() {
        condition.withLock { running -= 1 }
    }

    /// One outcome passed from the publishing thread to the request waiting for it.
    private final class Handoff: @unchecked Sendable {
        private let condition = ConditionLock()
        private var result: Result<FaultOutcome, FaultError>?

        /// Hands the result over; false when one was handed over already.
        @discardableResult
        func deliver(_ value: Result<FaultOutcome, FaultError>) -> Bool {
            condition.withLock {
                guard result == nil else { return false }
                result = value
                condition.broadcast()
                return true
            }
        }

        func wait() -> Result<FaultOutcome, FaultError> {
            condition.withLock {
                while true {
                    if let result { return result }
                    condition.wait()
                }
            }
        }
    }
}
