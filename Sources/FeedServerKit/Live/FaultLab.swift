import FeedStore
import Foundation

/// Runs the fault lab's slow publishes: each on its own thread, holding its group's lock and
/// its `.tmp` folder for the seconds asked, so the request that started it is answered at once
/// (while readers can be watched) and no HTTP worker waits out the hold.
final class FaultLab: @unchecked Sendable {
    // Guards `stopping` and `running`; holds wait on it so a shutdown can cut them short.
    private let condition = NSCondition()
    private var stopping = false
    private var running = 0

    /// Starts a slow publish and returns what readers get while its `.tmp` folder is held (or
    /// why it could not start); the rename and pointer switch follow after `seconds`.
    func slowPublish(store: FeedStore, _ request: FaultRequest, group: String, seconds: Int?) -> Result<FaultOutcome, FaultError> {
        let handoff = Handoff()
        condition.lock()
        running += 1
        condition.unlock()
        let thread = Thread { [self] in
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
        thread.start()
        return handoff.wait()
    }

    /// Ends every hold now (shutdown); the held publishes then complete.
    func stopHolding() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until no slow publish is running, or `deadline` (monotonic nanoseconds) has passed.
    func waitForPublishes(until deadline: Int64) {
        while MonotonicClock.nanos() < deadline {
            condition.lock()
            let left = running
            condition.unlock()
            if left == 0 { return }
            usleep(5_000)
        }
    }

    private func hold(seconds: Int) {
        let deadline = Date(timeIntervalSinceNow: TimeInterval(seconds))
        condition.lock()
        while !stopping, condition.wait(until: deadline) {}
        condition.unlock()
    }

    private func finished() {
        condition.lock()
        running -= 1
        condition.unlock()
    }

    /// One outcome passed from the publishing thread to the request waiting for it.
    private final class Handoff: @unchecked Sendable {
        private let condition = NSCondition()
        private var result: Result<FaultOutcome, FaultError>?

        /// Hands the result over; false when one was handed over already.
        @discardableResult
        func deliver(_ value: Result<FaultOutcome, FaultError>) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            guard result == nil else { return false }
            result = value
            condition.broadcast()
            return true
        }

        func wait() -> Result<FaultOutcome, FaultError> {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let result { return result }
                condition.wait()
            }
        }
    }
}
