import FeedStore
import FeedStoreTesting
import Foundation
import Testing

/// `FeedStore.isCurrent`: a checked pointer is trusted, without a system call, until this store
/// writes anything or the probe interval passes; a thorough check always looks.
@Suite struct RevalidationTests {
    private func store(probeIntervalNanos: Int64) -> (FeedStore, RecordingFileSystem, String, TemporaryDirectory) {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let root = temporary.path + "/root"
        let store = FeedStore(root: root, configuration: FeedStoreConfiguration(probeIntervalNanos: probeIntervalNanos), fileSystem: recorder)
        return (store, recorder, root, temporary)
    }

    private func pointerChecks(_ recorder: RecordingFileSystem, _ root: String) -> Int {
        recorder.statusCalls.filter { $0 == root + "/g/current.json" }.count
    }

    @Test func aCheckedPointerIsTrustedUntilThisStoreWrites() throws {
        let (store, recorder, root, temporary) = store(probeIntervalNanos: 3_600_000_000_000)
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let token = store.snapshot(group: "g").token
        recorder.resetStatusCalls()
        for _ in 0..<100 { #expect(store.isCurrent(token)) }
        #expect(pointerChecks(recorder, root) == 0, "trusted: no lstat per check")

        // Any write by this store (here to another group) makes the next check look.
        _ = try store.publish(group: "other", payloadJSON: Array("[1]".utf8))
        #expect(store.isCurrent(token))
        #expect(store.isCurrent(token))
        #expect(pointerChecks(recorder, root) == 1)

        // A publish by this store to the group itself is seen by the very next check.
        _ = try store.publish(group: "g", payloadJSON: Array("[2]".utf8))
        #expect(!store.isCurrent(token))
        withExtendedLifetime(temporary) {}
    }

    @Test func anotherWritersChangeIsSeenOnceTheIntervalPasses() throws {
        let (store, recorder, root, temporary) = store(probeIntervalNanos: 50_000_000)
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let token = store.snapshot(group: "g").token
        // Another process's publish: a store of its own over the same root.
        _ = try FeedStore(root: root).publish(group: "g", payloadJSON: Array("[2]".utf8))
        #expect(!store.isCurrentNow(token), "a thorough check always looks")
        recorder.resetStatusCalls()
        usleep(60_000)
        #expect(!store.isCurrent(token), "seen once the interval has passed")
        #expect(pointerChecks(recorder, root) == 1)
        withExtendedLifetime(temporary) {}
    }

    @Test func aZeroIntervalChecksEveryTime() throws {
        let (store, recorder, root, temporary) = store(probeIntervalNanos: 0)
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let token = store.snapshot(group: "g").token
        recorder.resetStatusCalls()
        for _ in 0..<5 { #expect(store.isCurrent(token)) }
        #expect(pointerChecks(recorder, root) == 5)
        withExtendedLifetime(temporary) {}
    }
}
