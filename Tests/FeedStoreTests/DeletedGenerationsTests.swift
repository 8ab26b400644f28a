import FeedStore
import FeedStoreTesting
import Foundation
import Testing

/// A DELETE moves the group's generations into the server's own area, where their assets stay
/// readable through the grace period, and are removed after it.
@Suite struct DeletedGenerationsTests {
    private let grace: Int64 = 60_000

    private func store(_ root: String, _ clock: FixedClock) -> FeedStore {
        FeedStore(root: root, configuration: FeedStoreConfiguration(gracePeriodMs: grace), clock: clock)
    }

    private func publishWithAsset(_ store: FeedStore) throws -> String {
        let result = try store.publish(
            group: "g", payloadJSON: Array(#"{"image":"a.png"}"#.utf8),
            assets: [AssetInput(name: "a.png", bytes: [1, 2, 3])])
        guard case .published(let id, _, _) = result else { throw UnexpectedResult("not published: \(result)") }
        return id
    }

    /// A store over a new root whose group `g` had a feed with one asset, deleted at the clock's time.
    private func deletedFeed() throws -> (TemporaryDirectory, FixedClock, FeedStore, String) {
        let temporary = TemporaryDirectory()
        let clock = FixedClock(epochMs: 1_800_000_000_000)
        let store = store(temporary.path, clock)
        let id = try publishWithAsset(store)
        try store.clear(group: "g")
        return (temporary, clock, store, id)
    }

    private func contents(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test func theAssetsOfADeletedFeedStayReadableThroughTheGracePeriodAndNothingStaysInTheGroup() throws {
        let (temporary, clock, store, id) = try deletedFeed()

        #expect(store.read(group: "g").served == nil)
        #expect(contents(temporary.path + "/g") == ["publish.lock"], "no pointer, no generations, no .deleted*")
        #expect(store.assetIndex(group: "g", generationId: id)?.map(\.name) == ["a.png"])
        let file = try store.openAsset(group: "g", generationId: id, name: "a.png")
        #expect(file.status.size == 3)
        #expect(!store.groups().contains(".feed-server-deleted"), "the area is no group")

        clock.advance(byMs: grace)
        #expect(store.assetIndex(group: "g", generationId: id) == nil, "past the grace period")
        #expect(throws: FileSystemError.self) { try store.openAsset(group: "g", generationId: id, name: "a.png") }
        _ = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        #expect(contents(temporary.path + "/.feed-server-deleted") == [], "swept by the next write of the group")
    }

    @Test func aDeletedGenerationPastItsGraceIsRemovedAtStartEvenIfItsGroupIsNeverWrittenAgain() throws {
        let temporary = TemporaryDirectory()
        let clock = FixedClock(epochMs: 1_800_000_000_000)
        _ = try publishWithAsset(store(temporary.path, clock))
        try store(temporary.path, clock).clear(group: "g")
        #expect(contents(temporary.path + "/.feed-server-deleted/g").count == 1)
        store(temporary.path, clock).sweepLeftovers()
        #expect(contents(temporary.path + "/.feed-server-deleted/g").count == 1, "within the grace period")
        clock.advance(byMs: grace)
        store(temporary.path, clock).sweepLeftovers()
        #expect(contents(temporary.path + "/.feed-server-deleted/g").isEmpty)
    }

    @Test func twoDeletesInOneMillisecondKeepBothAndTheNewestIsFoundFirst() throws {
        let (temporary, clock, store, first) = try deletedFeed()
        clock.advance(byMs: 1)
        let second = try publishWithAsset(store)
        clock.advance(byMs: -1)
        try store.clear(group: "g")
        #expect(contents(temporary.path + "/.feed-server-deleted/g").count == 2)
        #expect(store.assetIndex(group: "g", generationId: first) != nil)
        #expect(store.assetIndex(group: "g", generationId: second) != nil)
    }

    @Test func aGenerationOfTheGroupIsFoundBeforeADeletedOneOfTheSameId() throws {
        let (temporary, _, store, id) = try deletedFeed()
        #expect(try publishWithAsset(store) == id, "same content, same clock: the same id again")
        let served = try #require(store.read(group: "g").served)
        #expect(store.assetIndex(group: "g", generationId: id) == served.assets)
        withExtendedLifetime(temporary) {}
    }
}

private struct UnexpectedResult: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
