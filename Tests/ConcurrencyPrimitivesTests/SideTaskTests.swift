import Foundation
import Synchronization
import Testing

@testable import ConcurrencyPrimitives

/// Work offered to a pool while its owner does something else; the owner's join never waits for
/// a pool that is busy or stopped.
@Suite struct SideTaskTests {
    private final class Token: Sendable {}

    /// A task offered to a pool whose one thread is busy until `release()`: it counts its runs and
    /// holds a token, so a test sees whether it ran and whether it still holds what it captured.
    private final class RunCount: Sendable {
        let value = Atomic<Int>(0)
    }

    private final class HeldPoolTask: Sendable {
        let pool: WorkPool
        let task: SideTask<Int>
        let runs = RunCount()
        private let held = DispatchSemaphore(value: 0)
        private weak let watched: Token?

        init() throws {
            pool = try WorkPool(threads: 1, queueLimit: 4)
            let token = Token()
            watched = token
            let runs = runs
            task = SideTask {
                withExtendedLifetime(token) { _ = runs.value.add(1, ordering: .relaxed) }
                return 1
            }
            let held = held
            #expect(pool.submit { held.wait() }, "the pool's one thread is busy")
            task.offer(to: pool)
        }

        /// Whether the task still holds its token.
        var holdsToken: Bool { watched != nil }

        /// Lets the pool's thread go and waits until the pool has had its turn at the task.
        func release() {
            held.signal()
            let done = DispatchSemaphore(value: 0)
            #expect(pool.submit { done.signal() })
            done.wait()
        }
    }

    @Test func theFirstClaimRunsTheWorkAndTheOwnerTakesItsValue() {
        var pool = SideTaskState<Int>()
        let first = pool.claim()
        let second = pool.claim()
        #expect(first, "a pool thread that gets there first runs it")
        #expect(!second, "only once")
        guard case .wait = pool.join() else {
            Issue.record(Comment(rawValue: "running elsewhere: the owner waits"))
            return
        }
        pool.finish(7)
        guard case .take(7) = pool.join() else {
            Issue.record(Comment(rawValue: "done: the owner takes the value"))
            return
        }

        var owner = SideTaskState<Int>()
        guard case .runHere = owner.join() else {
            Issue.record(Comment(rawValue: "nobody started it: the owner runs it"))
            return
        }
        let late = owner.claim()
        #expect(!late, "a pool thread that comes later does nothing")
        owner.finish(8)
        guard case .take(8) = owner.join() else {
            Issue.record(Comment(rawValue: "the value stays"))
            return
        }
    }

    @Test func aPoolThreadRunsTheWorkWhileTheOwnerIsBusy() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let ranOn = Lock<pthread_t?>(nil)
        let task = SideTask { () -> Int in
            ranOn.withLock { $0 = pthread_self() }
            return 42
        }
        task.offer(to: pool)
        let deadline = Date().addingTimeInterval(10)
        while ranOn.withLock({ $0 == nil }), Date() < deadline { usleep(1_000) }
        #expect(task.join() == 42)
        let thread = try #require(ranOn.withLock { $0 })
        #expect(pthread_equal(thread, pthread_self()) == 0, "the pool ran it, not the owner")
    }

    /// Work that signals once it runs, then holds until its gate opens, and returns `value`.
    private final class GatedWork: Sendable {
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let task: SideTask<Int>

        init(value: Int) {
            let (started, gate) = (started, gate)
            task = SideTask {
                started.signal()
                gate.wait()
                return value
            }
        }

        /// Joins on a new thread while the work runs elsewhere, and checks that the joiner waits
        /// until the gate opens, then is woken with the value.
        func expectAJoinerWaitsThenIsWoken(_ name: String) throws {
            #expect(started.wait(timeout: .now() + 10) == .success)
            let joined = DispatchSemaphore(value: 0)
            let value = Atomic<Int>(0)
            let task = task
            try DetachedThread.start(name: name) {
                value.store(task.join(), ordering: .sequentiallyConsistent)
                joined.signal()
            }
            // Time for the joiner to find the work claimed and wait (were it not yet waiting, it
            // would take the value without a wake, and the test would pass without testing the wake).
            usleep(100_000)
            #expect(joined.wait(timeout: .now()) == .timedOut, "\(name) waits while the work runs")
            gate.signal()
            #expect(joined.wait(timeout: .now() + 10) == .success, "\(name) was not woken")
            #expect(value.load(ordering: .sequentiallyConsistent) != 0)
        }
    }

    /// An owner that joins while a pool thread runs the work waits, and the pool thread's finish
    /// wakes it with the value.
    @Test func anOwnerWaitingForAPoolThreadIsWokenWithTheValue() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let work = GatedWork(value: 3)
        work.task.offer(to: pool)
        try work.expectAJoinerWaitsThenIsWoken("test-owner")
        #expect(work.task.join() == 3)
    }

    /// Two threads join: the one that finds the work unclaimed runs it, and its finish wakes the
    /// other (a publish's lint reads the store for itself while the writer waits for those reads).
    @Test func aJoinerThatRunsTheWorkWakesAnotherJoiner() throws {
        let work = GatedWork(value: 4)
        let first = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        try DetachedThread.start(name: "test-runner") { [task = work.task] in
            ran.store(task.join(), ordering: .sequentiallyConsistent)
            first.signal()
        }
        try work.expectAJoinerWaitsThenIsWoken("test-waiter")
        #expect(first.wait(timeout: .now() + 10) == .success)
        #expect(ran.load(ordering: .sequentiallyConsistent) == 4)
    }

    @Test func theOwnerRunsTheWorkWhenThePoolIsBusyAndThePoolSkipsItLater() throws {
        let held = try HeldPoolTask()
        defer { held.pool.stop() }
        #expect(held.task.join() == 1)
        #expect(!held.holdsToken, "the work, and what it captured, is let go once run")
        held.release()
        #expect(held.runs.value.load(ordering: .relaxed) == 1, "run once: the pool's late turn does nothing")
    }

    @Test func anAbandonedTaskNeverRunsAndLetsGoOfItsWork() throws {
        var state = SideTaskState<Int>()
        let abandoned = state.abandon()
        let late = state.claim()
        #expect(abandoned && !late, "abandoned before anyone claimed it: no pool thread runs it")
        #expect(state.abandoned, "and the owner may not join it")
        var running = SideTaskState<Int>()
        _ = running.claim()
        let tooLate = running.abandon()
        #expect(!tooLate && !running.abandoned, "a thread already runs it: abandoning changes nothing")

        let held = try HeldPoolTask()
        defer { held.pool.stop() }
        held.task.abandon()
        #expect(!held.holdsToken, "what the work captured is let go at once")
        held.release()
        #expect(held.runs.value.load(ordering: .relaxed) == 0, "the pool's turn does nothing")
    }

    @Test func aStoppedPoolLeavesTheWorkToItsOwner() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        pool.stop()
        let task = SideTask { 5 }
        task.offer(to: pool)
        #expect(task.join() == 5)
    }

    @Test func manyOwnersAndPoolThreadsRaceAndEachValueIsRightOnce() throws {
        let pool = try WorkPool(threads: 2, queueLimit: 10_000)
        defer { pool.stop() }
        let runs = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            let task = SideTask { () -> Int in
                runs.add(1, ordering: .relaxed)
                return index * 2
            }
            task.offer(to: pool)
            if index % 3 == 0 { usleep(50) }
            #expect(task.join() == index * 2)
        }
        #expect(runs.load(ordering: .relaxed) == 2_000)
    }
}
