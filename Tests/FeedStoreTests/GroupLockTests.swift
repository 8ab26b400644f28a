import ConcurrencyPrimitives
import FeedStoreTesting
import Foundation
import Testing

@testable import FeedStore

/// The group's lock: this process's writers queue on `GroupWriters`, and a publish keeps the lock
/// (with its bookkeeping) until its answer is on its way.
@Suite struct GroupLockTests {
    let clock = FixedClock(epochMs: 1_764_450_000_000)

    private func memoryStore(lockWaitMs: Int64 = 30) -> (FeedStore, InMemoryFileSystem) {
        let fileSystem = InMemoryFileSystem(clock: clock)
        var configuration = FeedStoreConfiguration()
        configuration.lockWaitMs = lockWaitMs
        return (
            FeedStore(root: "/root", configuration: configuration, fileSystem: fileSystem, clock: clock), fileSystem
        )
    }

    private func publish(_ store: FeedStore, _ seq: Int) throws(PublishError) -> PublishResult {
        try store.publish(group: "g", payloadJSON: bytes(#"{"seq":\#(seq)}"#))
    }

    @Test func aClaimWaitsOnlyForItsOwnGroup() {
        let writers = GroupWriters()
        #expect(writers.claim("/root/a", until: MonotonicClock.nanos()))
        #expect(writers.claim("/root/b", until: MonotonicClock.nanos()), "another group is free")
        #expect(!writers.claim("/root/a", until: MonotonicClock.nanos() + 5_000_000), "held: the wait runs out")
        writers.release("/root/a")
        #expect(writers.claim("/root/a", until: MonotonicClock.nanos()), "released: free at once")
    }

    @Test func aWaitingClaimTakesTheGroupWhenItIsLetGo() throws {
        let writers = GroupWriters()
        #expect(writers.claim("/root/a", until: MonotonicClock.nanos()))
        let deadline = MonotonicClock.nanos() + 30_000_000_000
        let claimed = Lock(false)
        let waiter = try JoinableThread { claimed.withLock { $0 = writers.claim("/root/a", until: deadline) } }
        usleep(50_000)
        writers.release("/root/a")
        waiter.join()
        #expect(claimed.withLock { $0 }, "woken by the release, long before its deadline")
        #expect(MonotonicClock.nanos() < deadline)
        #expect(!writers.claim("/root/a", until: MonotonicClock.nanos()), "the waiter holds it now")
    }

    @Test func aPublishKeepsItsLockUntilTheAnswerIsOnItsWay() throws {
        let (store, _) = memoryStore()
        try AfterAnswer.collecting { () throws(PublishError) -> Void in
            _ = try publish(store, 1)
            #expect(throws: PublishError.self, "the first publish's lock is still held") { try publish(store, 2) }
        }.get()
        #expect(try publish(store, 3).isPublished, "the lock was let go once its scope ended")
    }

    @Test func aPublishOutsideAnAnswerLetsItsLockGoAtOnce() throws {
        let (store, _) = memoryStore()
        _ = try publish(store, 1)
        _ = try store.storeProfile(WidgetProfile(json: bytes(#"{"items":"/quotes"}"#)), group: "g")
        #expect(try publish(store, 2).isPublished)
    }

    @Test func theServedMemoIsUpdatedBeforeTheLockGoes() throws {
        let (store, _) = memoryStore()
        try AfterAnswer.collecting { () throws(PublishError) -> Void in _ = try publish(store, 1) }.get()
        #expect(try !publish(store, 1).isPublished, "the same feed again is unchanged")
    }

    @Test func aSweepingPublishRemovesStraysBeforeItReturns() throws {
        let (store, fileSystem) = memoryStore()
        _ = try publish(store, 1)
        try fileSystem.createDirectory("/root/g/generations/1700000000000-abcdef01.tmp")
        store.retention.forget("/root/g")
        try AfterAnswer.collecting { () throws(PublishError) -> Void in
            _ = try publish(store, 2)
            let names = (try? fileSystem.listDirectory("/root/g/generations").map(\.name)) ?? []
            #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(names)")
        }.get()
    }
}

extension PublishResult {
    fileprivate var isPublished: Bool {
        if case .published = self { return true }
        return false
    }
}

extension AfterAnswer {
    /// `collecting` for a body that throws: the body's error, after what it deferred ran.
    fileprivate static func collecting<E: Error>(_ body: () throws(E) -> Void) -> Result<Void, E> {
        collecting { Result(catching: body) }
    }
}
