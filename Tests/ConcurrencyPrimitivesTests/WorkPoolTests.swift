import Foundation
import Synchronization
import Testing

@testable import ConcurrencyPrimitives

/// The work pool: idle-class threads, a bounded queue, jobs that let go of what they captured.
@Suite struct WorkPoolTests {
    private final class Token: Sendable {}

    /// Pool jobs, and the threads they start (as image preparation does), run in Linux's idle
    /// scheduling class, below every thread that answers reads.
    @Test func jobsAndTheThreadsTheyStartRunInTheIdleClass() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let policies = Lock<(job: Int32, child: Int32)?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            pool.submit {
                let child = Lock<Int32>(-1)
                try? DetachedThread.start { child.withLock { $0 = sched_getscheduler(0) } }
                while child.withLock({ $0 }) == -1 { usleep(1_000) }
                policies.withLock { $0 = (sched_getscheduler(0), child.withLock { $0 }) }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + 10) == .success)
        let observed = try #require(policies.withLock { $0 })
        #expect(observed.job == 5, "SCHED_IDLE")
        #expect(observed.child == 5, "inherited by threads the job starts")
        #expect(sched_getscheduler(0) == 0, "the caller stays SCHED_OTHER")
    }

    @Test func aFullQueueAndAStoppedPoolRefuseJobs() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 2)
        let release = Atomic<Bool>(false)
        let started = Atomic<Int>(0)
        #expect(
            pool.submit {
                started.add(1, ordering: .relaxed)
                while !release.load(ordering: .relaxed) { usleep(1000) }
            })
        try waitUntil { started.load(ordering: .relaxed) == 1 }
        #expect(pool.submit {})
        #expect(pool.submit {})
        #expect(!pool.submit {}, "queue full")
        release.store(true, ordering: .relaxed)
        try waitUntil { pool.waiting == 0 }
        pool.stop()
        #expect(!pool.submit {}, "stopped")
    }

    /// A started job leaves the queue: kept there, it would hold everything it captured (a server
    /// holds its pool through the pipeline its jobs capture, so none would ever be freed).
    @Test func aStartedJobNoLongerHoldsWhatItCaptured() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        weak var observed: Token?
        let ran = Atomic<Bool>(false)
        do {
            let token = Token()
            observed = token
            #expect(pool.submit { withExtendedLifetime(token) { ran.store(true, ordering: .sequentiallyConsistent) } })
        }
        try waitUntil { ran.load(ordering: .sequentiallyConsistent) }
        try waitUntil(seconds: 2) { observed == nil }
    }
}

/// Polls `condition` until it holds, failing after `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw TimedOut() }
        usleep(10_000)
    }
}

/// A condition that did not come true in time.
struct TimedOut: Error {}
