import FeedStoreTesting
import Foundation
import Testing

@testable import FeedStore

/// The served generation and the profile kept in memory between publishes: a republish reads
/// neither from disk, and anything that changed their files (another store on the root, a file
/// damaged in place, an asset removed) is seen as a fresh read would see it.
@Suite struct ServedMemoTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func wrote(_ result: PublishResult) -> Bool {
        if case .published = result { return true }
        return false
    }

    private func recordedStore() -> (FeedStore, RecordingFileSystem, String, TemporaryDirectory) {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let root = temporary.path + "/root"
        return (FeedStore(root: root, fileSystem: recorder), recorder, root, temporary)
    }

    private func feedReads(_ recorder: RecordingFileSystem) -> [String] {
        recorder.wholeReads.filter { $0.hasSuffix("/feed.json") || $0.hasSuffix("/current.json") }
    }

    @Test func onceOpenedTheLockFileIsNotLookedForAgain() throws {
        let (store, recorder, root, temporary) = recordedStore()
        defer { _ = temporary }
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        #expect(recorder.statusCalls.contains(root + "/g/publish.lock"), "a new group's is looked for")
        recorder.resetStatusCalls()
        #expect(wrote(try store.publish(group: "g", payloadJSON: bytes("[2]"))))
        #expect(!wrote(try store.publish(group: "g", payloadJSON: bytes("[2]"))))
        #expect(!recorder.statusCalls.contains(root + "/g/publish.lock"), "\(recorder.statusCalls)")
    }

    @Test func aRepublishReadsNothingOfTheServedGeneration() throws {
        let (store, recorder, _, temporary) = recordedStore()
        defer { _ = temporary }
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"), assets: [AssetInput(name: "a.png", bytes: [1])])
        recorder.resetWholeReads()
        let again = try store.publish(
            group: "g", payloadJSON: bytes("[1]"), assets: [AssetInput(name: "a.png", bytes: [1])])
        let next = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(!wrote(again) && wrote(next))
        #expect(store.servedPayload(group: "g")?.generation.compactPayload == bytes("[2]"))
        #expect(feedReads(recorder).isEmpty, "\(feedReads(recorder))")
    }

    @Test func whatIsKeptAfterAPublishIsWhatAReadFinds() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let store = FeedStore(root: root)
        _ = try store.publish(group: "g", payloadJSON: bytes("[0]"))
        _ = try store.publish(
            group: "g", payloadJSON: bytes(#"{"b": [1, 2.50], "a": "x"}"#), schemaVersion: 3,
            assets: [AssetInput(name: "z.png", bytes: [1, 2]), AssetInput(name: "B.png", bytes: [3])])
        let kept = try #require(
            store.servedMemo.inspection(of: GroupLayout(root: root, group: "g"), fileSystem: PosixFileSystem()))
        let fresh = FeedStore(root: root)
        #expect(kept.read == fresh.read(group: "g"))
        #expect(kept.read.served?.assets.map(\.name) == ["B.png", "z.png"])
    }

    @Test func aPublishByAnotherStoreOnTheRootIsSeen() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let ours = FeedStore(root: root)
        let theirs = FeedStore(root: root)
        _ = try ours.publish(group: "g", payloadJSON: bytes("[1]"))
        _ = try theirs.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(ours.servedPayload(group: "g")?.generation.compactPayload == bytes("[2]"))
        let result = try ours.publish(group: "g", payloadJSON: bytes("[1]"))
        #expect(wrote(result), "[2] is served: [1] is a change again")
    }

    @Test func aServedFeedDamagedInPlaceIsHealedByTheSameContent() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let store = FeedStore(root: root)
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        _ = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        let served = try #require(store.servedPayload(group: "g")?.generation)
        let envelope = root + "/g/generations/\(served.id)/feed.json"
        // Same size, other bytes: only the file's times and change time tell.
        let size = try #require(FileManager.default.attributesOfItem(atPath: envelope)[.size] as? Int)
        try Data(repeating: UInt8(ascii: "x"), count: size).write(to: URL(fileURLWithPath: envelope))
        #expect(store.servedPayload(group: "g")?.generation.id == first.generationId, "the reader falls back")
        #expect(wrote(try store.publish(group: "g", payloadJSON: bytes("[2]"))), "written again: healed")
    }

    @Test func aRemovedAssetIsSeen() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let store = FeedStore(root: root)
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        let second = try store.publish(
            group: "g", payloadJSON: bytes("[2]"), assets: [AssetInput(name: "a.png", bytes: [1])])
        try FileManager.default.removeItem(atPath: root + "/g/generations/\(second.generationId)/assets/a.png")
        #expect(store.servedPayload(group: "g")?.generation.compactPayload == bytes("[1]"))
    }

    @Test func payloadsAreKeptWithinTheByteLimitLeastRecentlyUsedFirstOut() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let store = FeedStore(root: root)
        let memo = ServedMemo(byteLimit: 400, groupLimit: 2)
        func keep(_ group: String, _ payload: String) throws {
            _ = try store.publish(group: group, payloadJSON: bytes(payload))
            let layout = GroupLayout(root: root, group: group)
            _ = memo.inspect(with: store.reader(of: layout))
        }
        try keep("a", "[" + String(repeating: "1,", count: 40) + "1]")  // 83 bytes
        try keep("b", "[2]")
        #expect(memo.payloadBytes == 86)
        try keep("c", "[3]")  // two groups at most: a, the least recently used, goes
        #expect(memo.inspection(of: GroupLayout(root: root, group: "a"), fileSystem: PosixFileSystem()) == nil)
        #expect(memo.payloadBytes == 6)
        try keep("d", "[" + String(repeating: "1,", count: 60) + "1]")  // 123 bytes: over a quarter
        #expect(memo.inspection(of: GroupLayout(root: root, group: "d"), fileSystem: PosixFileSystem()) == nil)
        #expect(memo.payloadBytes == 6)
    }

    @Test func aPayloadParsedByAMoreLenientStoreIsCheckedAgainstThisOnesLimits() throws {
        let temporary = TemporaryDirectory()
        let lenient = FeedStore(root: temporary.path + "/a")
        let strict = FeedStore(
            root: temporary.path + "/b", configuration: FeedStoreConfiguration(maxPayloadDepth: 2))
        let deep = try lenient.parsePayload(bytes("[[[1]]]"))
        #expect(wrote(try lenient.publish(group: "g", payload: deep)))
        #expect(throws: PublishError.self) { try strict.publish(group: "g", payload: deep) }
        #expect(wrote(try strict.publish(group: "g", payload: try lenient.parsePayload(bytes("[[1]]")))))
    }

    @Test func aProfileIsReadOnceAndAReplacementIsSeen() throws {
        let (store, recorder, root, temporary) = recordedStore()
        defer { _ = temporary }
        let profile = try WidgetProfile(json: bytes(#"{"items": "/quotes", "title": "/text"}"#))
        try store.storeProfile(profile, group: "g")
        recorder.resetWholeReads()
        for _ in 0..<3 { #expect(try store.profile(group: "g") == profile) }
        #expect(recorder.wholeReads.filter { $0.hasSuffix("profile.json") }.count == 1)

        let other = try WidgetProfile(json: bytes(#"{"items": "/quotes", "title": "/name"}"#))
        try FeedStore(root: root).storeProfile(other, group: "g")
        #expect(try store.profile(group: "g") == other)
    }
}
