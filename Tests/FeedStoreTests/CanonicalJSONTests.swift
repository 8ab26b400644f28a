import FeedStore
import Testing

@Suite struct CanonicalJSONTests {
    private func canonical(_ text: String) throws -> String {
        String(decoding: try CompactJSON.canonicalize(bytes(text)), as: UTF8.self)
    }

    @Test func keepsMemberOrderAndNumberLiterals() throws {
        #expect(try canonical(#"{ "z" : 1.50, "a" : [ 1E3 , -0, 0.0e-0 ] }"#) == #"{"z":1.50,"a":[1E3,-0,0.0e-0]}"#)
    }

    @Test func escapesMinimally() throws {
        #expect(
            try canonical(#"["\/ \u00e9 \u0001 \b\f\n\r\t \"\\ \ud83d\ude00 \u007f"]"#)
                == "[\"/ é \\u0001 \\b\\f\\n\\r\\t \\\"\\\\ 😀 \u{7f}\"]")
    }

    /// Plain runs are copied whole: escapes, controls and UTF-8 at a run's start, middle and end.
    @Test func plainRunsAroundEscapesAndUTF8AreKept() throws {
        #expect(
            try canonical(#"["\"ab\"", "ab\\", "\tab", "é", "aé", "éa", "a\u0000b", "\u001f\u0020~\u007f"]"#)
                == "[\"\\\"ab\\\"\",\"ab\\\\\",\"\\tab\",\"é\",\"aé\",\"éa\",\"a\\u0000b\",\"\\u001f ~\u{7f}\"]")
        var written: [UInt8] = []
        CompactJSON.writeString("q\"\\\u{1}é~", to: &written)
        #expect(String(decoding: written, as: UTF8.self) == #""q\"\\\u0001é~""#)
    }

    @Test func acceptsAnyTopLevelValue() throws {
        #expect(try canonical(" true ") == "true")
        #expect(try canonical("\"x\"") == "\"x\"")
        #expect(try canonical("null") == "null")
    }

    @Test(arguments: [
        ("", 0, "empty document"),
        ("{\"a\":1,}", 7, "expected a member name"),
        ("[1,]", 3, "unexpected character"),
        ("{\"a\":1 \"b\":2}", 7, "expected ',' or '}'"),
        ("01", 1, "leading zeros"),
        ("1.", 2, "expected a digit after '.'"),
        ("\"a\u{01}\"", 2, "unescaped control character"),
        ("\"\\x\"", 2, "invalid escape"),
        ("\"\\ud800\"", 1, "high surrogate"),
        ("\"\\udc00\"", 1, "lone low surrogate"),
        ("{\"a\":1,\"a\":2}", 7, "duplicate member name"),
        ("[1] 2", 4, "unexpected data after"),
        ("nul", 0, "invalid literal"),
        ("// c\n1", 0, "unexpected character"),
    ])
    func rejectsInvalidJSONWithOffsetAndReason(_ input: String, _ offset: Int, _ reason: String) {
        #expect {
            _ = try CompactJSON.canonicalize(bytes(input))
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.offset == offset && error.reason.contains(reason)
        }
    }

    @Test func rejectsInvalidUTF8() {
        for sample: [UInt8] in [
            [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22],
        ] {
            #expect(throws: JSONParseError.self) { _ = try CompactJSON.canonicalize(sample) }
        }
    }

    @Test func boundsDepthAndSize() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(throws: JSONParseError.self) {
            _ = try CompactJSON.canonicalize(bytes(deep), limits: JSONLimits(maxDepth: 128))
        }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { _ = try CompactJSON.canonicalize(bytes(fine), limits: JSONLimits(maxDepth: 128)) }
        #expect(throws: JSONParseError.self) {
            _ = try CompactJSON.canonicalize(bytes("[1,2,3]"), limits: JSONLimits(maxBytes: 4))
        }
    }

    /// A document's canonical bytes (strings without an escape copied as they are) match the
    /// tree written back string by string, for literals mixing plain text, escapes and UTF-8.
    @Test func copiedLiteralsMatchTheWrittenTree() throws {
        var generator = SeededGenerator(seed: 11)
        let pieces = ["a", "~", "\u{7f}", "é", "😀", "\\\"", "\\\\", "\\n", "\\u0001", "\\u00e9", "\\/", " "]
        for _ in 0..<2000 {
            func literal() -> String {
                "\""
                    + (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                        pieces.randomElement(using: &generator) ?? ""
                    }.joined() + "\""
            }
            let input = Array("{\(literal()):[\(literal()),{\(literal()):\(literal())}]}".utf8)
            let tree = try JSONParser.parse(input)
            #expect(
                try CompactJSON.canonicalize(input) == CompactJSON.bytes(tree),
                "\(String(decoding: input, as: UTF8.self))")
        }
    }
}
