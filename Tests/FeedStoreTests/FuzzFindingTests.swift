import FeedStore
import Testing

/// The fuzz corpus's regression inputs for the store's code as unit tests, each with the rule it
/// checks; each input is also in Fuzz/Corpus/<target>/.
@Suite struct FuzzFindingTests {
    /// json: regression-pointer-combining-mark. "/" followed by a combining mark is one Character,
    /// so a Character-wise prefix test would say the pointer does not start with "/".
    @Test func aPointerTokenMayStartWithACombiningMark() throws {
        let document = try JSONParser.parse(Array("{\"\u{301}x\":1,\"a\":{\"\u{301}\":2}}".utf8))
        #expect(JSONPointer("/\u{301}x")?.tokens == ["\u{301}x"])
        #expect(JSONPointer("/\u{301}x")?.resolve(in: document) == .number("1"))
        #expect(JSONPointer("/a/\u{301}")?.resolve(in: document) == .number("2"))
    }

    /// format: regression-envelope-sha256-escaping. An asset's sha256 is escaped like any string:
    /// written between quotes unescaped, one read from another writer's folder would not encode to
    /// JSON. (Decoding also drops an asset list whose sha256 is not hex.)
    @Test func anEnvelopeEncodesEveryStringEscaped() throws {
        let envelope = Envelope(
            schemaVersion: 1, generatedAtEpochMs: 1, fingerprint: "f", compactPayload: Array("[]".utf8),
            assets: [StoredAsset(name: "a.png", byteCount: 1, sha256: "\"x\\\n", width: 1, height: 2)])
        let encoded = try JSONParser.parse(envelope.encoded())
        #expect(encoded["assets"]?.arrayValue?.first?["sha256"]?.stringValue == "\"x\\\n")
    }
}
