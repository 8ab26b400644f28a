import Testing

@testable import FeedImaging

/// The prefetch queue's transitions, without threads: jobs in arrival order, one worker at a
/// time, work lent by a pack, cancellation.
@Suite struct PrefetchQueueTests {
    typealias Queue = PrefetchQueue<Int, String>

    private func jobs(of step: Queue.Step?) -> Int? {
        if case .prefetch(let job) = step { return job }
        return nil
    }

    private func help(of step: Queue.Step?) -> String? {
        if case .help(let work) = step { return work }
        return nil
    }

    /// Jobs 1, 2 and 3 queued, the worker on job 1.
    private func workingOnTheFirstOfThree() -> Queue {
        var queue = Queue()
        for job in 1...3 { _ = queue.add(job) }
        #expect(jobs(of: queue.next()) == 1)
        return queue
    }

    @Test func theFirstJobAsksForAWorkerWhichTakesJobsInArrivalOrder() {
        var queue = Queue()
        #expect(queue.add(1) == .startWorker)
        #expect(queue.add(2) == .none, "a worker is on its way")
        #expect(jobs(of: queue.next()) == 1)
        #expect(queue.add(3) == .none)
        #expect(jobs(of: queue.next()) == 2)
        #expect(jobs(of: queue.next()) == 3)
        #expect(queue.next().isStop && !queue.working, "an empty queue stops its worker")
        #expect(queue.add(4) == .startWorker, "and the next job asks for another")
    }

    @Test func lentWorkReplacesTheJobsNotBegunAndIsReportedDone() {
        var queue = workingOnTheFirstOfThree()
        let (lent, dropped) = queue.lend("pack")
        #expect(lent && dropped == [2, 3] && queue.pending.isEmpty)
        #expect(queue.lend("again").lent == false, "work is lent once")
        #expect(queue.add(4) == .none && queue.pending.isEmpty, "the pack has every image now")
        #expect(!queue.lentWorkDone)
        #expect(help(of: queue.next()) == "pack")
        #expect(!queue.lentWorkDone)
        queue.lentWorkFinished()
        #expect(queue.lentWorkDone)
        #expect(queue.next().isStop && !queue.working)
    }

    @Test func noWorkIsLentWhenNoWorkerRuns() {
        var queue = Queue()
        #expect(queue.lend("pack").lent == false, "nothing was ever queued")
        _ = queue.add(1)
        _ = queue.next()
        #expect(queue.next().isStop)
        #expect(queue.lend("pack").lent == false, "the worker has stopped")
    }

    @Test func aWorkerThatCannotStartLeavesJobsAndLentWorkToThePack() {
        var queue = Queue()
        #expect(queue.add(1) == .startWorker)
        #expect(queue.lend("pack").lent, "lent while the worker was starting")
        #expect(queue.workerUnavailable().isEmpty)
        #expect(queue.lentWorkDone, "a pack waiting for it goes on: its own threads did the work")
        var other = Queue()
        _ = other.add(1)
        _ = other.add(2)
        #expect(other.workerUnavailable() == [1, 2] && !other.working)
        #expect(other.add(3) == .startWorker, "a later job tries again")
    }

    @Test func cancellingDropsTheJobsNotBegunAndTakesNoMore() {
        var queue = workingOnTheFirstOfThree()
        #expect(queue.cancel() == [2, 3])
        #expect(queue.add(4) == .none && queue.pending.isEmpty)
        #expect(queue.next().isStop && !queue.working, "the worker stops after its current image")
    }
}

extension Optional {
    /// Whether a worker's step is nil (stop), without needing `Step` to be equatable.
    fileprivate var isStop: Bool {
        if case .none = self { return true }
        return false
    }
}
