import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// A publish lints beside its write. Whichever thread makes the lint's reads of the store (the
/// pool's, or the writer's own when the pool is busy), they must see the feed the publish replaces,
/// never the one it writes or one another writer replaced: the invisible-change check compares the two.
@Suite struct PublishCommitTests {
    private let scratch = ScratchDirectory("publish-commit")

    /// What a publish on another thread answered.
    private final class Answer: Sendable {
        let codes = Lock<[String]?>(nil)
    }

    private func committer() throws -> PublishCommit {
        let store = FeedStore(root: scratch.path + "/data")
        try store.storeProfile(try WidgetProfile(json: Array(#"{"items":"/quotes","title":"/text"}"#.utf8)), group: "g")
        return PublishCommit(store: store, lint: FeedLint())
    }

    /// Publishes a quote and its stamp; the generation written and the warnings' codes.
    private func publish(
        _ commit: PublishCommit, _ text: String, stamp: Int, beside pool: WorkPool?
    ) throws -> (generation: String, warnings: [String]) {
        let payload = Array(#"{"quotes":[{"text":"\#(text)"}],"stamp":\#(stamp)}"#.utf8)
        let committed = try commit.commit(
            group: "g", upload: AssetUpload(payload: payload, packing: AssetBudget.Result()), schemaVersion: 1,
            strict: false, beside: pool)
        return (committed.result.generationId, committed.warnings.warnings.map(\.code.rawValue))
    }

    @Test func aBusyPoolLeavesTheReadsToTheWriterBeforeItsSwitch() throws {
        let commit = try committer()
        #expect(try publish(commit, "one", stamp: 1, beside: nil).warnings == [])
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        // The pool's one thread waits, so the lint offered to it only starts when the writer joins it.
        let gate = DispatchSemaphore(value: 0)
        #expect(pool.submit { gate.wait() })
        defer { gate.signal() }
        // Read after the switch, the served feed would be this one: an invisible change to itself.
        #expect(try publish(commit, "two", stamp: 2, beside: pool).warnings == [], "a new title is visible")
        #expect(try publish(commit, "two", stamp: 3, beside: pool).warnings == ["invisible-change"])
    }

    /// The pool's reads come before the group's lock: another writer can switch the feed between
    /// them and this publish, which then makes them again under the lock.
    @Test func readsThatSawAnotherFeedAreMadeAgainUnderTheLock() throws {
        let commit = try committer()
        let first = try publish(commit, "one", stamp: 1, beside: nil).generation
        #expect(try publish(commit, "two", stamp: 2, beside: nil).warnings == [])
        let group = scratch.path + "/data/g"
        let lock = open(group + "/publish.lock", O_RDWR | O_CLOEXEC)
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0, "another writer holds the group")
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let done = DispatchSemaphore(value: 0)
        let warnings = Answer()
        try DetachedThread.start(name: "test-publisher") { [self] in
            let codes = try? publish(commit, "two", stamp: 3, beside: pool).warnings
            warnings.codes.withLock { $0 = codes }
            done.signal()
        }
        // Time for the pool's reads (they see "two") while the publish waits for the lock.
        usleep(200_000)
        // The other writer puts the first feed back before it lets go.
        let pointer = Array(#"{"current":"\#(first)","previous":[]}"#.utf8)
        #expect(FileManager.default.createFile(atPath: group + "/current.json.tmp", contents: Data(pointer)))
        #expect(rename(group + "/current.json.tmp", group + "/current.json") == 0)
        flock(lock, LOCK_UN)
        close(lock)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(warnings.codes.withLock { $0 } == [], "against the feed it replaced (\"one\"), the title changed")
    }
}
