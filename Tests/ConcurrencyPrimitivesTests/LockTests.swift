import Foundation
import Testing

@testable import ConcurrencyPrimitives

/// `Lock`'s timed wait: it gives up at its deadline while another thread holds the lock, and takes
/// the lock as soon as it is free.
@Suite struct LockTests {
    private final class Shared: Sendable {
        let lock = Lock(0)
    }

    private func wallClock(inMs milliseconds: Int) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = now.tv_nsec + milliseconds * 1_000_000
        return timespec(tv_sec: now.tv_sec + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
    }

    @Test func aTimedWaitGivesUpWhileHeldAndTakesTheLockOnceFree() throws {
        let shared = Shared()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        try DetachedThread.start(name: "test-holder") {
            shared.lock.withLock { value in
                value = 1
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        #expect(shared.lock.withLock(waitingUntil: wallClock(inMs: 50)) { $0 } == nil, "held: gave up")
        release.signal()
        #expect(shared.lock.withLock(waitingUntil: wallClock(inMs: 10_000)) { $0 } == 1, "free: taken")
    }
}
