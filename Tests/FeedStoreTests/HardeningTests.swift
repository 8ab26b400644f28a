import FeedStore
import FeedStoreTesting
import Foundation
import Testing

/// Hostile and edge-case inputs from clients and from disk: none may trap, be misread, or be
/// acknowledged and then never served.
@Suite struct JSONInputHardeningTests {
    @Test func memberNamesAreComparedAsBytesNotUnderCanonicalEquivalence() throws {
        // "é" precomposed (U+00E9) and decomposed (e + U+0301): equal as Swift Strings, different members.
        let document = "{\"\u{00E9}\":1,\"e\u{0301}\":2}"
        let value = try JSONParser.parse(bytes(document))
        #expect(value["\u{00E9}"] == .number("1"))
        #expect(value["e\u{0301}"] == .number("2"))
        #expect(try CompactJSON.canonicalize(bytes(document)) == bytes(document), "both kept, bytes unchanged")
        // The Kelvin sign K (U+212A) decomposes canonically to "K": still a different name.
        let kelvin = try JSONParser.parse(bytes("{\"\u{212A}ey\":1}"))
        #expect(kelvin["Key"] == nil)
        // A byte-identical duplicate is still refused, with the offset of the second name.
        #expect(throws: JSONParseError(offset: 8, reason: "duplicate member name \"\u{00E9}\"")) {
            _ = try JSONParser.parse(bytes("{\"\u{00E9}\":1,\"\u{00E9}\":2}"))
        }
    }

    @Test(arguments: [
        ("[1e400]", 1), ("[-1e400]", 1), ("{\"a\":1E+309}", 5),
        ("[" + "1" + String(repeating: "0", count: 309) + "]", 1),
        ("[1.5e99999999999999999999]", 1),
    ])
    func numbersBeyondDoubleRangeAreRefusedWithTheirOffset(_ document: String, _ offset: Int) {
        #expect(
            performing: {
                _ = try JSONParser.parse(bytes(document))
            },
            throws: { error in
                guard let error = error as? JSONParseError else { return false }
                return error.offset == offset && error.reason.contains("beyond the range of a double")
            })
    }

    @Test func aLongLiteralBeyondRangeIsShownCutAndSaidToBe() {
        let digits = "1" + String(repeating: "0", count: 999)
        #expect(
            performing: { _ = try JSONParser.parse(bytes("[\(digits)]")) },
            throws: { error in
                (error as? JSONParseError)?.reason
                    == "number \(digits.prefix(40))… (1000 characters) is beyond the range of a double"
            })
        #expect(
            performing: { _ = try JSONParser.parse(bytes("[1e400]")) },
            throws: { error in (error as? JSONParseError)?.reason == "number 1e400 is beyond the range of a double" })
    }

    @Test(arguments: [
        "[1e308]", "[-1.7976931348623157e308]", "[1e-400]", "[0." + String(repeating: "0", count: 400) + "1]",
        "[123456789012345678901234567890]", "[1.50]", "[-0]", "[2E-3]",
    ])
    func everyOtherNumberLiteralIsKeptExactly(_ document: String) throws {
        #expect(try CompactJSON.canonicalize(bytes(document)) == bytes(document))
    }

    @Test func loneSurrogatesAreErrorsNotTraps() throws {
        for document in [#"["\udc00"]"#, #"["\ud800"]"#, #"["\ud800\u0041"]"#, #"["\ud800\udbff"]"#] {
            #expect(throws: JSONParseError.self, "\(document)") { _ = try JSONParser.parse(bytes(document)) }
        }
        #expect(try JSONParser.parse(bytes(#"["\ud83d\ude00"]"#)) == .array([.string("😀")]))
    }
}

@Suite struct ForeignFolderTests {
    private func writeGeneration(_ root: String, _ id: String, feed: String, assets: [String: [UInt8]] = [:]) throws {
        let folder = "\(root)/g/generations/\(id)"
        try FileManager.default.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        try Data(feed.utf8).write(to: URL(fileURLWithPath: folder + "/feed.json"))
        for (name, content) in assets { try Data(content).write(to: URL(fileURLWithPath: folder + "/assets/" + name)) }
    }

    private func writePointer(_ root: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(root)/g/current.json"))
    }

    private func envelope(assets: String?) -> String {
        let fingerprint = String(repeating: "a", count: 64)
        let extra = assets.map { ",\"assets\":\($0)" } ?? ""
        return
            "{\"schemaVersion\":1,\"generatedAtEpochMs\":1764450000000,\"fingerprint\":\"\(fingerprint)\",\"payload\":{\"v\":1}\(extra)}"
    }

    @Test(arguments: [
        #"{"icon.png":{"w":1}}"#, #""icons""#, #"[{"file":"icon.png"}]"#,
        #"[{"name":"icon.png","bytes":"3","sha256":"x"}]"#,
        #"[{"name":"icon.png","bytes":3,"sha256":"not-a-digest"}]"#,
        #"[{"name":"icon.png","bytes":-3,"sha256":"\#(String(repeating: "b", count: 64))"}]"#,
        "[1,2]", "null",
    ])
    func anAssetsKeyOfAnotherShapeCountsAsAbsent(_ foreign: String) throws {
        let temporary = TemporaryDirectory()
        try writeGeneration(
            temporary.path, "1764450000000-aaaaaaaa", feed: envelope(assets: foreign), assets: ["icon.png": [1, 2, 3]])
        try writePointer(temporary.path, #"{"current":"1764450000000-aaaaaaaa","previous":[]}"#)
        let read = FeedStore(root: temporary.path).read(group: "g")
        #expect(read.served?.id == "1764450000000-aaaaaaaa", "readable, as WidgetBridge reads it: \(read.skipped)")
        #expect(read.served?.assets.map(\.name) == ["icon.png"], "assets listed from the folder")
    }

    @Test func ourOwnAssetListStillDetectsATornAsset() throws {
        let temporary = TemporaryDirectory()
        let digest = String(repeating: "b", count: 64)
        try writeGeneration(
            temporary.path, "1764450000000-aaaaaaaa",
            feed: envelope(assets: #"[{"name":"icon.png","bytes":9,"sha256":"\#(digest)"}]"#),
            assets: ["icon.png": [1, 2, 3]])
        let read = FeedStore(root: temporary.path).read(group: "g")
        #expect(read.served == nil)
        #expect(read.skipped.first?.reason == .incompleteAsset("icon.png"))
    }

    @Test(arguments: [#""1764450000000-aaaaaaaa""#, #"[1]"#, #"["1764450000000-aaaaaaaa",2]"#, #"{"id":"x"}"#, "true"])
    func aPointerWithAMalformedPreviousIsNotUsedAtAll(_ previous: String) throws {
        // The pointer names the older generation; if it were partly used, that would be served.
        let temporary = TemporaryDirectory()
        try writeGeneration(temporary.path, "1764450000000-aaaaaaaa", feed: envelope(assets: nil))
        try writeGeneration(temporary.path, "1764450000001-aaaaaaaa", feed: envelope(assets: nil))
        try writePointer(temporary.path, #"{"current":"1764450000000-aaaaaaaa","previous":\#(previous)}"#)
        let read = FeedStore(root: temporary.path).read(group: "g")
        #expect(read.pointerProblem != nil)
        #expect(read.served?.id == "1764450000001-aaaaaaaa", "the folder listing, newest first, as WidgetBridge does")
    }

    @Test(arguments: ["", #","previous":null"#, #","previous":[]"#])
    func aPointerWithoutPreviousOrWithNullIsUsed(_ previous: String) throws {
        let temporary = TemporaryDirectory()
        try writeGeneration(temporary.path, "1764450000000-aaaaaaaa", feed: envelope(assets: nil))
        try writeGeneration(temporary.path, "1764450000001-aaaaaaaa", feed: envelope(assets: nil))
        try writePointer(temporary.path, #"{"current":"1764450000000-aaaaaaaa"\#(previous)}"#)
        let read = FeedStore(root: temporary.path).read(group: "g")
        #expect(read.pointerProblem == nil)
        #expect(read.served?.id == "1764450000000-aaaaaaaa")
    }

    @Test(arguments: [
        "999999999999999999-aaaaaaaa", "9223372036854775807-aaaaaaaa", "99999999999999999999999-aaaaaaaa",
    ])
    func publishingAfterAnExtremeIdOnDiskNeverTraps(_ id: String) throws {
        let temporary = TemporaryDirectory()
        try writeGeneration(temporary.path, id, feed: envelope(assets: nil))
        try writePointer(temporary.path, #"{"current":"\#(id)","previous":[]}"#)
        let store = FeedStore(root: temporary.path)
        for round in 0..<3 {
            let result = try store.publish(group: "g", payloadJSON: bytes("[\(round)]"))
            #expect(store.read(group: "g").served?.id == result.generationId)
            let written = try #require(store.read(group: "g").served)
            #expect(GenerationID.epochMs(of: written.id) == written.generatedAtEpochMs)
        }
    }

    @Test func generationIDsParseOnlyWhatFitsInt64() {
        #expect(GenerationID.epochMs(of: "9223372036854775807-a") == Int64.max)
        #expect(GenerationID.epochMs(of: "9223372036854775808-a") == nil)
        #expect(GenerationID.epochMs(of: "1764450000000-3fa85f64") == 1_764_450_000_000)
        #expect(GenerationID.epochMs(of: "-3fa85f64") == nil)
        #expect(GenerationID.epochMs(of: "12x-3") == nil)
    }
}

@Suite struct OneLimitTests {
    /// The size of the feed.json a publish of `payload` writes (nothing else in it varies).
    private func feedSize(_ store: FeedStore, _ payload: String) throws -> Int {
        let result = try store.publish(group: "probe", payloadJSON: bytes(payload))
        return try Data(
            contentsOf: URL(fileURLWithPath: "\(store.root)/probe/generations/\(result.generationId)/feed.json")
        ).count
    }

    @Test func aFeedExactlyAtTheLimitIsWrittenAndServedAndOneByteMoreIsRefused() throws {
        let temporary = TemporaryDirectory()
        let limit = 4096
        let store = FeedStore(root: temporary.path, configuration: FeedStoreConfiguration(maxFeedBytes: limit))
        let overhead = try feedSize(store, #"{"pad":""}"#)
        let atLimit = #"{"pad":""# + String(repeating: "x", count: limit - overhead) + #""}"#
        let published = try store.publish(group: "g", payloadJSON: bytes(atLimit))
        let size = try Data(
            contentsOf: URL(fileURLWithPath: "\(temporary.path)/g/generations/\(published.generationId)/feed.json")
        ).count
        #expect(size == limit)
        #expect(store.read(group: "g").served?.id == published.generationId, "acknowledged, so readable")
        #expect(
            FeedStore(root: temporary.path, configuration: FeedStoreConfiguration(maxFeedBytes: limit)).read(group: "g")
                .served?.id == published.generationId)

        let overLimit = #"{"pad":""# + String(repeating: "y", count: limit - overhead + 1) + #""}"#
        #expect(throws: PublishError.feedTooLarge(bytes: limit + 1, limit: limit)) {
            _ = try store.publish(group: "g", payloadJSON: bytes(overLimit))
        }
        #expect(store.read(group: "g").served?.id == published.generationId, "the previous feed is still served")
        let folders = try FileManager.default.contentsOfDirectory(atPath: temporary.path + "/g/generations")
        #expect(folders == [published.generationId], "nothing written for the refused publish")
    }

    @Test func aPayloadAtTheDepthLimitIsReadableInsideItsEnvelope() throws {
        let temporary = TemporaryDirectory()
        let store = FeedStore(root: temporary.path, configuration: FeedStoreConfiguration(maxPayloadDepth: 8))
        let deepest = String(repeating: "[", count: 8) + String(repeating: "]", count: 8)
        let result = try store.publish(group: "g", payloadJSON: bytes(deepest))
        #expect(store.read(group: "g").served?.id == result.generationId)
        #expect(throws: PublishError.self) {
            _ = try store.publish(group: "g", payloadJSON: bytes("[" + deepest + "]"))
        }
    }
}

@Suite struct WriteRaceTests {
    @Test func publishesRacingDeletesNeverFailAndLeaveNothingBehind() async throws {
        let temporary = TemporaryDirectory()
        let store = FeedStore(
            root: temporary.path, configuration: FeedStoreConfiguration(keepPrevious: 1, gracePeriodMs: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                group.addTask {
                    for round in 0..<150 {
                        _ = try store.publish(group: "g", payloadJSON: bytes("{\"w\":\(worker),\"r\":\(round)}"))
                    }
                }
            }
            group.addTask {
                for _ in 0..<150 { try store.clear(group: "g") }
            }
            try await group.waitForAll()
        }
        _ = try store.publish(group: "g", payloadJSON: bytes("[\"last\"]"))
        #expect(store.read(group: "g").served?.compactPayload == bytes("[\"last\"]"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: temporary.path + "/g")
        #expect(!entries.contains { $0.hasPrefix(".deleted-generations-") }, "\(entries)")
    }

    @Test func whatAnInterruptedDeleteLeftIsSweptAtStartAndByTheNextWrite() throws {
        let temporary = TemporaryDirectory()
        let store = FeedStore(root: temporary.path)
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        _ = try store.publish(group: "h", payloadJSON: bytes("[1]"))
        let leftover = { (group: String) in
            temporary.path + "/\(group)/.deleted-generations-1764450000000/1764449999999-aaaaaaaa"
        }
        for group in ["g", "h"] {
            try FileManager.default.createDirectory(atPath: leftover(group), withIntermediateDirectories: true)
        }

        FeedStore(root: temporary.path).sweepLeftovers()
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/g/.deleted-generations-1764450000000"))
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/h/.deleted-generations-1764450000000"))

        try FileManager.default.createDirectory(atPath: leftover("g"), withIntermediateDirectories: true)
        _ = try FeedStore(root: temporary.path).publish(group: "g", payloadJSON: bytes("[2]"))
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/g/.deleted-generations-1764450000000"))
    }

    @Test func storesStartingOnOneRootAtOnceAllPassTheWriteProbe() async throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var failed = 0
                    for _ in 0..<50 {
                        do { try FeedStore(root: root).prepareRoot() } catch { failed += 1 }
                    }
                    return failed
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path + "/root").isEmpty,
            "no probe left behind")
    }
}

@Suite struct RetentionVisibilityTests {
    @Test func anExpiredGenerationLeavesReadersSightInOneStepBeforeItIsDeleted() throws {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        // The real clock: retirement is judged by folder mtimes.
        let store = FeedStore(
            root: temporary.path,
            configuration: FeedStoreConfiguration(keepPrevious: 0, gracePeriodMs: 0, sweepIntervalMs: 0),
            fileSystem: recorder)
        let first = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        recorder.reset()
        _ = try store.publish(group: "g", payloadJSON: Array("[2]".utf8))
        let folder = "\(temporary.path)/g/generations/\(first.generationId)"
        // A crash between deleting its files and its folder would otherwise leave a visible,
        // half-deleted generation; as a `.tmp` folder, readers ignore it and the next sweep removes it.
        #expect(recorder.operations.contains(.rename(folder, folder + ".removed.tmp")), "\(recorder.operations)")
        #expect(recorder.operations.contains(.removeTree(folder + ".removed.tmp")))
        #expect(!recorder.operations.contains(.removeTree(folder)))
    }
}

@Suite struct RotationRangeTests {
    /// The slot computed with 128-bit arithmetic, where nothing can overflow.
    private func referenceSlot(_ epochMs: Int64, _ zone: Int) -> Int64 {
        let local = Int128(epochMs) + Int128(zone) * 1000
        let quotient = local / 3_600_000
        return Int64(local % 3_600_000 != 0 && local < 0 ? quotient - 1 : quotient)
    }

    @Test func hourSlotIsDefinedForEveryInput() {
        let epochs: [Int64] = [
            .min, .min + 1, -8_640_000_000_000_000, -1, 0, 1, 3_599_999, 3_600_000, 1_764_450_000_000, .max - 1, .max,
        ]
        let zones = [-64_800, -3600, -1, 0, 1, 1800, 64_800, Int(Int32.max), Int(Int32.min)]
        for epoch in epochs {
            for zone in zones {
                #expect(
                    WidgetRotation.hourSlot(epochMs: epoch, zoneOffsetSeconds: zone) == referenceSlot(epoch, zone),
                    "\(epoch) \(zone)")
            }
        }
        #expect(WidgetRotation.index(slot: .min, count: 7) == Int(((Int128(Int64.min) % 7) + 7) % 7))
        #expect(WidgetRotation.index(slot: 5, count: 0) == 0)
    }

    @Test func aTimelineNearTheEndOfTimeStopsInsteadOfTrapping() {
        let entries = WidgetTimeline.entries(
            items: [.number("1")], startEpochMs: .max, hours: 24, zoneOffsetSeconds: 64_800)
        #expect(entries.count < 24)
        let ordinary = WidgetTimeline.entries(
            items: [.number("1")], startEpochMs: 1_764_450_000_000, hours: 24, zoneOffsetSeconds: 3600)
        #expect(ordinary.count == 24)
    }
}
