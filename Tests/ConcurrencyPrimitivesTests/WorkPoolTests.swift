import Foundation
import Synchronization
import Testing

@testable import ConcurrencyPrimitives

/// The work pool: named threads at normal priority, a bounded queue, jobs that let go of what they captured.
@Suite struct WorkPoolTests {
    private final class Token: Sendable {}

    /// Pool jobs run at normal priority on threads named for the pool: only image work is lowered,
    /// on threads of its own, so a busy machine does not starve a publish.
    @Test func jobsRunAtNormalPriorityOnNamedThreads() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4, name: "test-pool")
        defer { pool.stop() }
        let observed = Lock<(policy: Int32, nice: Int32, name: String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            pool.submit {
                observed.withLock { $0 = (sched_getscheduler(0), currentNice(), currentThreadName()) }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + 10) == .success)
        let job = try #require(observed.withLock { $0 })
        #expect(job.policy == 0, "SCHED_OTHER")
        #expect(job.nice == currentNice(), "the caller's nice value")
        #expect(job.name == "test-pool")
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

    /// A job submitted while every worker waits is run: the submitter wakes one (each time, as
    /// the workers go back to waiting between jobs).
    @Test func aJobSubmittedWhileEveryWorkerWaitsIsRun() throws {
        let pool = try WorkPool(threads: 2, queueLimit: 4)
        defer { pool.stop() }
        for _ in 0..<3 {
            try waitUntil { pool.parkedWorkers == 2 }
            let done = DispatchSemaphore(value: 0)
            #expect(pool.submit { done.signal() })
            #expect(done.wait(timeout: .now() + 10) == .success, "no worker was woken")
        }
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
