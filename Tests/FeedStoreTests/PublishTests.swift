import FeedStore
import FeedStoreTesting
import Foundation
import Testing

@Suite struct PublishTests {
    let clock = FixedClock(epochMs: 1_764_450_000_000)

    private func memoryStore(
        keepPrevious: Int = 1, graceMs: Int64 = 60_000, notifier: CountingNotifier = CountingNotifier()
    )
        -> (FeedStore, InMemoryFileSystem)
    {
        let fileSystem = InMemoryFileSystem(clock: clock)
        let store = FeedStore(
            root: "/root", configuration: FeedStoreConfiguration(keepPrevious: keepPrevious, gracePeriodMs: graceMs),
            fileSystem: fileSystem, clock: clock, notifier: notifier)
        return (store, fileSystem)
    }

    @Test func publishThenReadReturnsThePayloadAndAssets() throws {
        let (store, _) = memoryStore()
        let result = try store.publish(
            group: "quotes", payloadJSON: bytes(#"{ "b": 1.0, "a": "x" }"#), schemaVersion: 2,
            assets: [AssetInput(name: "q2.png", bytes: [2, 2]), AssetInput(name: "q1.png", bytes: [1])])
        guard case .published(let id, let fingerprint, let assetBytes) = result else {
            Issue.record("not published")
            return
        }
        #expect(id == "1764450000000-\(fingerprint.prefix(8))")
        #expect(assetBytes == 3)
        let served = try #require(store.read(group: "quotes", schemaVersion: 2).served)
        #expect(served.id == id)
        #expect(String(decoding: served.compactPayload, as: UTF8.self) == #"{"b":1.0,"a":"x"}"#)
        #expect(served.assets.map(\.name) == ["q1.png", "q2.png"])
        #expect(served.assets.map(\.bytes) == [1, 2])
        #expect(served.assets[0].sha256 == SHA256Hash.hex([1]))
        #expect(store.read(group: "quotes", schemaVersion: 1).served == nil)
    }

    @Test func dedupeWritesNothingAndDoesNotNotify() throws {
        let notifier = CountingNotifier()
        let (store, fileSystem) = memoryStore(notifier: notifier)
        let first = try store.publish(group: "g", payloadJSON: bytes(#"{"a":[1,2]}"#))
        let writes = fileSystem.writeCount
        let paths = fileSystem.allPaths
        let pointer = try fileSystem.readFile("/root/g/current.json", limit: 1 << 20)
        clock.advance(byMs: 5_000)
        // Same payload, different whitespace: same canonical form, same fingerprint.
        let second = try store.publish(group: "g", payloadJSON: bytes("{ \"a\" : [ 1 , 2 ] }\n"))
        #expect(second == .unchanged(generationId: first.generationId, fingerprint: first.fingerprint))
        #expect(fileSystem.writeCount == writes)
        #expect(fileSystem.allPaths == paths)
        #expect(try fileSystem.readFile("/root/g/current.json", limit: 1 << 20) == pointer)
        #expect(notifier.count == 1)
    }

    @Test func whileServedGetsTheReplacedFeedWhileReadersStillGetIt() throws {
        let (store, fileSystem) = memoryStore()
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        clock.advance(byMs: 1000)
        var seen: [String?] = []
        let second = try store.publish(
            group: "g", payload: try store.parsePayload(bytes("[2]")),
            whileServed: { servedID in
                #expect(servedID == store.read(group: "g").served?.id)
                seen.append(servedID)
                // The new generation is in place by then: only the pointer has not moved.
                let names = (try? fileSystem.listDirectory("/root/g/generations"))?.map(\.name) ?? []
                #expect(names.count == 2 && !names.contains { $0.hasSuffix(".tmp") })
            })
        #expect(seen == [first.generationId])
        #expect(store.read(group: "g").served?.id == second.generationId)
        let unchanged = try store.publish(
            group: "g", payload: try store.parsePayload(bytes("[2]")), whileServed: { seen.append($0) })
        #expect(unchanged == .unchanged(generationId: second.generationId, fingerprint: second.fingerprint))
        #expect(seen == [first.generationId, second.generationId], "an unchanged publish names what it found")
    }

    @Test func unsafeNamesAreRefusedBeforeAnythingIsWritten() {
        let (store, fileSystem) = memoryStore()
        for group in ["", ".", "..", "a/b", "ä", String(repeating: "x", count: 129), "a b"] {
            #expect(throws: PublishError.self) { try store.publish(group: group, payloadJSON: bytes("{}")) }
        }
        for name in ["..", "../x.png", "a/b.png", ".", "x\u{0}.png"] {
            #expect(throws: PublishError.self) {
                try store.publish(group: "g", payloadJSON: bytes("{}"), assets: [AssetInput(name: name, bytes: [1])])
            }
        }
        #expect(throws: PublishError.duplicateAssetName("a.png")) {
            try store.publish(
                group: "g", payloadJSON: bytes("{}"),
                assets: [AssetInput(name: "a.png", bytes: [1]), AssetInput(name: "a.png", bytes: [2])])
        }
        #expect(throws: PublishError.self) { try store.publish(group: "g", payloadJSON: bytes("{")) }
        #expect(fileSystem.writeCount == 0)
        #expect(fileSystem.allPaths == ["/"])
    }

    @Test func keepsPreviousGenerationsAndFallsBackWhenCurrentIsCorrupt() throws {
        let (store, fileSystem) = memoryStore(keepPrevious: 2)
        var ids: [String] = []
        for value in 1...3 {
            clock.advance(byMs: 1000)
            ids.append(try store.publish(group: "g", payloadJSON: bytes("{\"v\":\(value)}")).generationId)
        }
        let pointer = try #require(Pointer.decode(try fileSystem.readFile("/root/g/current.json", limit: 1 << 20)))
        #expect(pointer == Pointer(current: ids[2], previous: [ids[1], ids[0]]))
        fileSystem.overwrite("/root/g/generations/\(ids[2])/feed.json", with: bytes("{\"schemaVersion\":1,"))
        let read = store.read(group: "g", schemaVersion: 1)
        #expect(read.served?.id == ids[1])
        #expect(read.skipped.map(\.id) == [ids[2]])
        #expect(read.skipped.first?.reason.code == "unparsable")
    }

    @Test func missingAndTruncatedGenerationsFallBack() throws {
        let (store, fileSystem) = memoryStore()
        let first = try store.publish(
            group: "g", payloadJSON: bytes("[1]"), assets: [AssetInput(name: "a.jpg", bytes: [1, 2, 3])])
        clock.advance(byMs: 1000)
        let second = try store.publish(
            group: "g", payloadJSON: bytes("[2]"), assets: [AssetInput(name: "a.jpg", bytes: [4, 5, 6])])
        // A torn write of the kind WidgetBridge allows: the asset file exists but is empty.
        fileSystem.overwrite("/root/g/generations/\(second.generationId)/assets/a.jpg", with: [])
        #expect(store.read(group: "g").served?.id == first.generationId)
        #expect(store.read(group: "g").skipped.first?.reason == .incompleteAsset("a.jpg"))
        try fileSystem.removeTree("/root/g/generations/\(second.generationId)")
        #expect(store.read(group: "g").skipped.first?.reason == .missing)
        #expect(store.read(group: "g").served?.id == first.generationId)
    }

    @Test func republishingAfterFallbackWritesANewGeneration() throws {
        let (store, fileSystem) = memoryStore()
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        clock.advance(byMs: 1000)
        let second = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        fileSystem.overwrite("/root/g/generations/\(second.generationId)/feed.json", with: bytes("garbage"))
        clock.advance(byMs: 1000)
        // The served feed is [1] now, so publishing [2] again is a change, not "unchanged".
        let third = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        guard case .published = third else {
            Issue.record("expected a new generation")
            return
        }
        #expect(third.generationId != second.generationId)
        #expect(store.read(group: "g").served?.id == third.generationId)
        #expect(first.generationId != third.generationId)
    }

    @Test func retentionHonoursKeepPreviousAndTheGracePeriod() throws {
        let (store, fileSystem) = memoryStore(keepPrevious: 1, graceMs: 60_000)
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        clock.advance(byMs: 1000)
        let second = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        clock.advance(byMs: 1000)
        _ = try store.publish(group: "g", payloadJSON: bytes("[3]"))
        // `first` just left the pointer: retired now, so still on disk within the grace period.
        #expect(fileSystem.status("/root/g/generations/\(first.generationId)") != nil)
        clock.advance(byMs: 61_000)
        let fourth = try store.publish(group: "g", payloadJSON: bytes("[4]"))
        #expect(fileSystem.status("/root/g/generations/\(first.generationId)") == nil)
        // `second` left the pointer with this publish: kept for its grace period.
        #expect(fileSystem.status("/root/g/generations/\(second.generationId)") != nil)
        #expect(store.read(group: "g").served?.id == fourth.generationId)
    }

    @Test func strayTemporaryFoldersAreRemovedByTheNextPublish() throws {
        let (store, fileSystem) = memoryStore()
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        try fileSystem.createDirectory("/root/g/generations/1764999999999-deadbeef.tmp")
        try fileSystem.writeFileDurably(
            "/root/g/generations/1764999999999-deadbeef.tmp/feed.json", contents: bytes("{"))
        #expect(store.read(group: "g").skipped.isEmpty)
        clock.advance(byMs: 1000)
        _ = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(fileSystem.status("/root/g/generations/1764999999999-deadbeef.tmp") == nil)
    }

    @Test func idsStayOrderedWhenTheClockStepsBack() throws {
        let (store, _) = memoryStore()
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        clock.advance(byMs: -3_600_000)
        let second = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(GenerationID.epochMs(of: second.generationId)! == GenerationID.epochMs(of: first.generationId)! + 1)
    }

    @Test func typedPublishAndRead() throws {
        struct QuoteFeed: Codable, Equatable, Sendable {
            struct Quote: Codable, Equatable, Sendable {
                var id: String
                var text: String
            }
            var quotes: [Quote]
            var emptyText: String
        }
        let (store, _) = memoryStore()
        let feed = QuoteFeed(quotes: [.init(id: "q1", text: "Carpe diem / today")], emptyText: "Nothing yet")
        let result = try store.publish(group: "g", payload: feed, schemaVersion: 1)
        #expect(
            try store.publish(group: "g", payload: feed, schemaVersion: 1)
                == .unchanged(generationId: result.generationId, fingerprint: result.fingerprint))
        #expect(store.read(QuoteFeed.self, group: "g", schemaVersion: 1)?.payload == feed)
        #expect(store.read(QuoteFeed.self, group: "g", schemaVersion: 2) == nil)
    }

    @Test func concurrentPublishersAreSerialised() async throws {
        let temporary = TemporaryDirectory()
        let store = FeedStore(
            root: temporary.path, configuration: FeedStoreConfiguration(keepPrevious: 1, gracePeriodMs: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<10 {
                        _ = try store.publish(group: "g", payloadJSON: bytes("{\"w\":\(worker),\"r\":\(round)}"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let read = store.read(group: "g")
        #expect(read.served != nil)
        #expect(read.skipped.isEmpty)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temporary.path + "/g/generations")
        #expect(!leftovers.contains { $0.hasSuffix(".tmp") })
    }

    /// A crash can leave the very names a publish makes exclusively: the folder of the next id
    /// and the pointer's temporary file. The publish replaces them and leaves neither behind.
    @Test func leftoversAtTheNamesAPublishMakesAreReplaced() throws {
        let temporary = TemporaryDirectory()
        let clock = FixedClock(epochMs: 1_764_450_000_000)
        let store = FeedStore(root: temporary.path + "/a", clock: clock)
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        // The same payload in another store at the same moment names the fingerprint part.
        let probe = try FeedStore(root: temporary.path + "/b", clock: clock).publish(
            group: "g", payloadJSON: bytes("[2]"))
        let fingerprintPart = try #require(probe.generationId.split(separator: "-").last)
        let next = "\(clock.nowEpochMs() + 1)-\(fingerprintPart)"
        let group = temporary.path + "/a/g"
        try FileManager.default.createDirectory(
            atPath: "\(group)/generations/\(next).tmp/assets", withIntermediateDirectories: true)
        try Data("torn".utf8).write(to: URL(fileURLWithPath: "\(group)/generations/\(next).tmp/feed.json"))
        try Data("{\"current\":".utf8).write(to: URL(fileURLWithPath: "\(group)/current.json.tmp"))
        let second = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(second.generationId == next)
        #expect(store.read(group: "g").served.map { String(decoding: $0.compactPayload, as: UTF8.self) } == "[2]")
        #expect(store.read(group: "g").served?.id != first.generationId)
        let names = try FileManager.default.contentsOfDirectory(atPath: "\(group)/generations")
        #expect(!names.contains { $0.hasSuffix(".tmp") })
        #expect(!FileManager.default.fileExists(atPath: "\(group)/current.json.tmp"))
    }

    @Test func snapshotTokenNoticesPublishesAtOnceAndCorruptionWithinTheProbeInterval() throws {
        let temporary = TemporaryDirectory()
        let clock = FixedClock(epochMs: 1_764_450_000_000)
        let store = FeedStore(root: temporary.path, clock: clock)
        let first = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        let snapshot = store.snapshot(group: "g")
        #expect(store.isCurrent(snapshot.token))
        // Someone rewrites the served feed.json in place, with no pointer change.
        let path = "\(temporary.path)/g/generations/\(first.generationId)/feed.json"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
        #expect(store.isCurrent(snapshot.token), "only the pointer is stat'ed within the interval")
        clock.advance(byMs: FeedStore.occasionalProbeIntervalMs)
        #expect(!store.isCurrent(snapshot.token))
        // A publish replaces the pointer: noticed on the very next check.
        clock.advance(byMs: 1000)
        let again = store.snapshot(group: "g")
        _ = try store.publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(!store.isCurrent(again.token))
    }
}
