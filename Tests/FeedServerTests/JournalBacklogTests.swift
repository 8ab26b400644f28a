import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// A write's journal entry is appended after its answer; journal reads wait for it.
@Suite struct JournalBacklogTests {
    @Test func aMarkIsSettledOnceEveryTicketUpToItIsClosed() {
        var pending = PendingEntries()
        #expect(pending.isSettled(through: pending.issued), "nothing promised yet")
        let first = pending.issue()
        let second = pending.issue()
        let mark = pending.issued
        #expect(!pending.isSettled(through: mark))
        pending.close(second)
        #expect(!pending.isSettled(through: mark), "the first is still open")
        let third = pending.issue()
        pending.close(first)
        #expect(pending.isSettled(through: mark), "a ticket issued after the mark is not waited for")
        #expect(!pending.isSettled(through: third))
        pending.close(third)
        pending.close(third)
        #expect(pending.isSettled(through: pending.issued) && pending.open.isEmpty, "closing twice is harmless")
    }

    @Test func settleWaitsForAnotherThreadsCloseAndGivesUpAtItsDeadline() throws {
        let backlog = JournalBacklog()
        #expect(backlog.settle(untilNanos: MonotonicClock.nanos()), "nothing pending: settled at once")
        let held = backlog.issue()
        #expect(!backlog.settle(untilNanos: MonotonicClock.nanos() + 20_000_000), "never closed: the deadline ends it")
        try DetachedThread.start {
            usleep(50_000)
            backlog.close(held)
        }
        #expect(backlog.settle(untilNanos: MonotonicClock.nanos() + 10_000_000_000))
    }

    /// Holds the journal's lock the way another process would: the publish is answered while it
    /// is held, and a journal read made then still shows the publish once the lock is let go.
    @Test func aPublishIsAnsweredBeforeItsEntryAndAJournalReadWaitsForTheEntry() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try withTestServer(root: root) { (_, client) throws -> Void in
            let lock = open(JournalFile(root: root).directory + "/journal.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            try #require(lock >= 0)
            defer { close(lock) }
            #expect(flock(lock, LOCK_EX) == 0)
            let published = try client.put("/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#)
            #expect(published.status == 201, "answered while the journal's lock is held")
            let read = Lock<WireResponse?>(nil)
            let done = DispatchGroup()
            DispatchQueue.global().async(group: done) {
                // Asked outside the lock, which the test's own look at `read` takes.
                let answer = try? client.get("/journal")
                read.withLock { $0 = answer }
            }
            usleep(200_000)
            #expect(read.withLock { $0 == nil }, "the read waits for the entry")
            #expect(flock(lock, LOCK_UN) == 0)
            done.wait()
            let entries = try #require(read.withLock { $0 }).json["entries"] as? [[String: Any]] ?? []
            #expect(entries.map { $0["generationId"] as? String } == [published.json["generationId"] as? String])
        }
    }
}
