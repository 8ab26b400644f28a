import FeedStore
import Foundation
import Testing

/// Every WidgetBridge fixture folder gives the expected generation, fingerprint and skips.
@Suite struct FixtureTests {
    static let cases = [
        "two-generations", "corrupt-current", "schema-upgrade", "no-pointer", "escape-pointer", "empty",
        "canonical-json",
    ]

    @Test(arguments: cases)
    func readerReturnsTheExpectedGeneration(_ name: String) throws {
        let expected = try #require(Fixtures.expected()[name] as? [String: Any])
        let temporary = TemporaryDirectory()
        _ = temporary.copyFixture(name)
        let store = FeedStore(root: temporary.path)
        try check(store.read(group: name, schemaVersion: expected["schemaVersion"] as? Int), against: expected)
        if let also = expected["also"] as? [String: Any] {
            try check(store.read(group: name, schemaVersion: also["schemaVersion"] as? Int), against: also)
        }
    }

    private func check(_ read: FeedRead, against expected: [String: Any]) throws {
        guard let id = expected["generationId"] as? String else {
            #expect(read.served == nil)
            return
        }
        let served = try #require(read.served)
        #expect(served.id == id)
        #expect(served.fingerprint == expected["fingerprint"] as? String)
        if let assets = expected["assets"] as? [String] {
            #expect(served.assets.map(\.name) == assets)
        }
        if let skipped = expected["skipped"] as? [String] {
            #expect(read.skipped.map(\.id) == skipped)
        }
    }

    /// Recomputing each served generation's fingerprint from its files gives the recorded one,
    /// so the fixtures double as vectors for canonical JSON and the asset-line format.
    @Test(arguments: cases.filter { $0 != "empty" })
    func fingerprintRecomputesFromTheFiles(_ name: String) throws {
        let temporary = TemporaryDirectory()
        let group = temporary.copyFixture(name)
        let served = try #require(FeedStore(root: temporary.path).read(group: name).served)
        let lines = try served.assets.map { asset in
            Fingerprint.AssetLine(
                name: asset.name,
                bytes: Array(
                    try Data(contentsOf: URL(fileURLWithPath: "\(group)/generations/\(served.id)/assets/\(asset.name)"))
                ))
        }
        #expect(
            Fingerprint.compute(
                schemaVersion: served.schemaVersion, compactPayload: served.compactPayload, assets: lines)
                == served.fingerprint)
    }

    @Test func canonicalJSONMatchesTheCompactPayload() throws {
        let expected = try #require(
            (Fixtures.expected()["canonical-json"] as? [String: Any])?["compactPayload"] as? String)
        let temporary = TemporaryDirectory()
        _ = temporary.copyFixture("canonical-json")
        let served = try #require(FeedStore(root: temporary.path).read(group: "canonical-json").served)
        #expect(String(decoding: served.compactPayload, as: UTF8.self) == expected)
    }

    @Test func skippedCandidatesCarryReasons() throws {
        let temporary = TemporaryDirectory()
        _ = temporary.copyFixture("escape-pointer")
        _ = temporary.copyFixture("corrupt-current")
        _ = temporary.copyFixture("schema-upgrade")
        let escape = FeedStore(root: temporary.path).read(group: "escape-pointer", schemaVersion: 1)
        #expect(escape.skipped.map(\.reason) == [.unsafeID, .unsafeID])
        let corrupt = FeedStore(root: temporary.path).read(group: "corrupt-current", schemaVersion: 1)
        #expect(corrupt.skipped.first?.reason.code == "unparsable")
        let upgrade = FeedStore(root: temporary.path).read(group: "schema-upgrade", schemaVersion: 1)
        #expect(upgrade.skipped.first?.reason == .wrongSchema(found: 2, wanted: 1))
        #expect(upgrade.isFallback)
    }

    @Test func noSchemaFilterServesTheNewestReadableGeneration() throws {
        let temporary = TemporaryDirectory()
        _ = temporary.copyFixture("schema-upgrade")
        let read = FeedStore(root: temporary.path).read(group: "schema-upgrade")
        #expect(read.served?.id == "1764453600000-7ddaeb30")
        #expect(read.skipped.isEmpty)
    }
}
