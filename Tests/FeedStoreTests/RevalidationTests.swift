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
        let store = FeedStore(
            root: root, configuration: FeedStoreConfiguration(probeIntervalNanos: probeIntervalNanos),
            fileSystem: recorder)
        return (store, recorder, root, temporary)
    }

    /// Publishes group `g` and returns its token, with the recorded `status` calls forgotten.
    private func publishedToken(_ store: FeedStore, _ recorder: RecordingFileSystem) throws -> ChangeToken {
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let token = store.snapshot(group: "g").token
        recorder.resetStatusCalls()
        return token
    }

    private func pointerChecks(_ recorder: RecordingFileSystem, _ root: String) -> Int {
        recorder.statusCalls.filter { $0 == root + "/g/current.json" }.count
    }

    @Test func aCheckedPointerIsTrustedUntilThisStoreWrites() throws {
        let (store, recorder, root, temporary) = store(probeIntervalNanos: 3_600_000_000_000)
        let token = try publishedToken(store, recorder)
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
        let token = try publishedToken(store, recorder)
        for _ in 0..<5 { #expect(store.isCurrent(token)) }
        #expect(pointerChecks(recorder, root) == 5)
        withExtendedLifetime(temporary) {}
    }

    /// The pointer is trusted from the moment it was stat'ed, not from the end of a long read of
    /// the generation: a switch by another process during the snapshot is seen one interval after
    /// the stat. (Were the interval to start when the snapshot ended, a switch while a large
    /// feed.json is parsed would stay unseen for the parse plus the interval.)
    @Test func aSwitchDuringTheSnapshotIsSeenAnIntervalAfterThePointerWasStated() throws {
        let (store, recorder, root, temporary) = store(probeIntervalNanos: 20_000_000)
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let other = FeedStore(root: root)
        recorder.beforeReadFile { path in
            guard path.hasSuffix("/feed.json") else { return }
            recorder.beforeReadFile(nil)
            _ = try? other.publish(group: "g", payloadJSON: Array("[2]".utf8))  // another process switches now
            usleep(50_000)  // and the read of the old generation takes long
        }
        let snapshot = store.snapshot(group: "g")
        #expect(snapshot.read.served?.compactPayload == Array("[1]".utf8))
        #expect(!store.isCurrent(snapshot.token), "50 ms after the pointer was stat'ed, past the 20 ms interval")
        withExtendedLifetime(temporary) {}
    }

    /// A fallback read is no longer current once the skipped generation is repaired in place
    /// (its feed.json put back), or damaged again differently: the skipped candidates' feed.json
    /// files are re-checked with the served one's.
    @Test func aFallbackEndsWhenTheSkippedGenerationIsRepairedInPlace() throws {
        let temporary = TemporaryDirectory()
        let store = FeedStore(root: temporary.path + "/root")
        _ = try store.publish(group: "g", payloadJSON: Array(#"["old"]"#.utf8))
        let newest = try store.publish(group: "g", payloadJSON: Array(#"["new"]"#.utf8))
        let feed = temporary.path + "/root/g/generations/\(newest.generationId)/feed.json"
        let away = temporary.path + "/feed.json.away"
        try FileManager.default.moveItem(atPath: feed, toPath: away)
        let fallback = store.snapshot(group: "g")
        #expect(fallback.read.served?.id != newest.generationId, "the older generation is served")
        #expect(store.isCurrentNow(fallback.token))
        try FileManager.default.moveItem(atPath: away, toPath: feed)
        #expect(!store.isCurrentNow(fallback.token), "the repair is seen")
        #expect(store.snapshot(group: "g").read.served?.id == newest.generationId)
    }
}
