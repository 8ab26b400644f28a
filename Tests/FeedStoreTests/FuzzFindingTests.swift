import FeedStore
import Testing

/// Defects the fuzz targets found in the store's code; each input is also in Fuzz/Corpus/<target>/.
@Suite struct FuzzFindingTests {
    /// json: regression-pointer-combining-mark. "/" followed by a combining mark is one Character,
    /// so a Character-wise prefix test said the pointer did not start with "/".
    @Test func aPointerTokenMayStartWithACombiningMark() throws {
        let document = try JSONParser.parse(Array("{\"\u{301}x\":1,\"a\":{\"\u{301}\":2}}".utf8))
        #expect(JSONPointer("/\u{301}x")?.tokens == ["\u{301}x"])
        #expect(JSONPointer("/\u{301}x")?.resolve(in: document) == .number("1"))
        #expect(JSONPointer("/a/\u{301}")?.resolve(in: document) == .number("2"))
    }

    /// format: regression-envelope-sha256-escaping. An asset's sha256 was written between quotes
    /// unescaped, so an envelope read from another writer's folder did not encode to JSON.
    /// (Decoding now also drops an asset list whose sha256 is not hex.)
    @Test func anEnvelopeEncodesEveryStringEscaped() throws {
        let envelope = Envelope(schemaVersion: 1, generatedAtEpochMs: 1, fingerprint: "f", compactPayload: Array("[]".utf8),
                                assets: [StoredAsset(name: "a.png", byteCount: 1, sha256: "\"x\\\n", width: 1, height: 2)])
        let encoded = try JSONParser.parse(envelope.encoded())
        #expect(encoded["assets"]?.arrayValue?.first?["sha256"]?.stringValue == "\"x\\\n")
    }
}
