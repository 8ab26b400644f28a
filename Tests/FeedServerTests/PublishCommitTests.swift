import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// A publish lints beside its write. Whichever thread makes the lint's reads of the store (the
/// pool's, or the writer's own when the pool is busy), they must see the feed the publish replaces,
/// never the one it writes: the invisible-change check compares the two.
@Suite struct PublishCommitTests {
    private let scratch = ScratchDirectory("publish-commit")

    private func committer() throws -> PublishCommit {
        let store = FeedStore(root: scratch.path + "/data")
        try store.storeProfile(try WidgetProfile(json: Array(#"{"items":"/quotes","title":"/text"}"#.utf8)), group: "g")
        return PublishCommit(store: store, lint: FeedLint())
    }

    private func publish(_ commit: PublishCommit, _ text: String, stamp: Int, beside pool: WorkPool?) throws -> [String]
    {
        let payload = Array(#"{"quotes":[{"text":"\#(text)"}],"stamp":\#(stamp)}"#.utf8)
        let committed = try commit.commit(
            group: "g", upload: AssetUpload(payload: payload, packing: AssetBudget.Result()), schemaVersion: 1,
            strict: false, beside: pool)
        #expect(committed.result.changed)
        return committed.warnings.warnings.map(\.code.rawValue)
    }

    @Test func aBusyPoolLeavesTheReadsToTheWriterBeforeItsSwitch() throws {
        let commit = try committer()
        #expect(try publish(commit, "one", stamp: 1, beside: nil) == [])
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        // The pool's one thread waits, so the lint offered to it only starts when the writer joins it.
        let gate = DispatchSemaphore(value: 0)
        #expect(pool.submit { gate.wait() })
        defer { gate.signal() }
        // Read after the switch, the served feed would be this one: an invisible change to itself.
        #expect(try publish(commit, "two", stamp: 2, beside: pool) == [], "a new title is visible")
        #expect(try publish(commit, "two", stamp: 3, beside: pool) == ["invisible-change"])
    }

    @Test func aFreePoolReadsTheReplacedFeedToo() throws {
        let commit = try committer()
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        #expect(try publish(commit, "one", stamp: 1, beside: pool) == [])
        for stamp in 2...20 {
            let text = stamp.isMultiple(of: 2) ? "same \(stamp)" : "same \(stamp - 1)"
            let expected = stamp.isMultiple(of: 2) ? [] : ["invisible-change"]
            #expect(try publish(commit, text, stamp: stamp, beside: pool) == expected, "stamp \(stamp)")
        }
    }
}
