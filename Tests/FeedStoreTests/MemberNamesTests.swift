import FeedStore
import Testing

/// Duplicate member names found by the decoded bytes, at any size of object, without a copy
/// of every name.
@Suite struct MemberNamesTests {
    @Test func namesSpelledDifferentlyButDecodingAlikeAreDuplicates() {
        #expect(throws: JSONParseError(offset: 7, reason: "duplicate member name \"a\"")) {
            try JSONParser.validate(Array(#"{"a":1,"\u0061":2}"#.utf8))
        }
        #expect(throws: JSONParseError(offset: 15, reason: "duplicate member name \"q\"\"")) {
            try JSONParser.validate(Array(#"{"q\"":1,"b":2,"q\u0022":3}"#.utf8))
        }
    }

    @Test func aLargeObjectIsReadAndADuplicateAtItsEndIsFoundWhereItIs() throws {
        let members = (0..<100_000).map { #""k\#($0)":\#($0)"# }
        let distinct = "{" + members.joined(separator: ",") + "}"
        #expect(try JSONDocument.parse(Array(distinct.utf8)).root.count == 100_000)
        let repeated = "{" + members.joined(separator: ",") + #","k5":0}"#
        let offset = repeated.utf8.count - #""k5":0}"#.utf8.count
        #expect(throws: JSONParseError(offset: offset, reason: "duplicate member name \"k5\"")) {
            try JSONParser.validate(Array(repeated.utf8))
        }
    }

    @Test func theFirstRepeatInDocumentOrderIsTheOneReported() {
        // Checked when the object ends, names sorted by hash: the report is still the earliest repeat.
        let text = #"{"b":1,"z":{"q":1},"a":1,"b":2,"a":2}"#
        let offset = text.utf8.count - #""b":2,"a":2}"#.utf8.count
        #expect(throws: JSONParseError(offset: offset, reason: "duplicate member name \"b\"")) {
            try JSONParser.validate(Array(text.utf8))
        }
        // A million members named alike are found at the second, not compared pairwise.
        let same = "{" + Array(repeating: #""a":0"#, count: 1_000_000).joined(separator: ",") + "}"
        #expect(throws: JSONParseError(offset: 7, reason: "duplicate member name \"a\"")) {
            try JSONParser.validate(Array(same.utf8), limits: JSONLimits(maxBytes: 8 << 20))
        }
    }

    @Test func oneMemberAndNestedObjectsKeepTheirOwnNames() throws {
        // The same name in a nested object and its parent is no duplicate.
        let value = try JSONParser.parse(Array(#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#.utf8))
        #expect(CompactJSON.bytes(value) == Array(#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#.utf8))
    }
}
