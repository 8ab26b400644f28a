import FeedStore
import Testing

@testable import FeedServerKit

/// The fuzz corpus's regression inputs for the server's code as unit tests, each with the rule it
/// checks; each input is also in Fuzz/Corpus/<target>/.
@Suite struct FuzzFindingTests {
    /// etags: regression-members-without-comma, regression-star-inside-a-tag. Blank-separated tags
    /// are not a list, and the If-None-Match matcher splits on commas between tags only, never
    /// inside a quoted one: split there, `"a,*,b"` would match everything as if it were `*`.
    @Test func entityTagListsFollowTheRFCGrammar() {
        #expect(Conditional.parseTagList(#"  "0123" *,"#) == nil)
        #expect(Conditional.parseTagList(#""a" "b""#) == nil)
        #expect(Conditional.parseTagList(#""a", *"#) == nil, "* stands alone")
        #expect(
            Conditional.parseTagList(#"W/"a", , "b,c""#) == [.weak("a"), .strong("b,c")],
            "empty elements and commas in tags")
        #expect(Conditional.parseTagList(#""a b""#) == nil, "no blanks inside a tag")
        #expect(Conditional.parseTagList(" * ") == [.any])
        #expect(!Conditional.ifNoneMatch(#""a,*,b""#, matches: #""0123abcd""#))
        #expect(!Conditional.ifNoneMatch(#""x,"0123abcd"#, matches: #""0123abcd""#))
        #expect(Conditional.ifNoneMatch(#""a,*,b", W/"0123abcd""#, matches: #""0123abcd""#))
        #expect(
            !Conditional.ifNoneMatch(#""0123abcd" "x""#, matches: #""0123abcd""#), "a malformed list matches nothing")
    }

    @Test func theServerAppliesTheGrammar() throws {
        try withTestServer { _, client in
            let published = try client.put("/feeds/g", json: "[1]")
            let tag = try #require(published.header("ETag"))
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", #""a,*,b""#)]).status == 200)
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", #""a,*,b", \#(tag)"#)]).status == 304)
            #expect(try client.put("/feeds/g", json: "[2]", headers: [("If-Match", "\(tag) \"other\"")]).status == 400)
            #expect(try client.put("/feeds/g", json: "[2]", headers: [("If-Match", "\"other\", \(tag)")]).status == 201)
        }
    }
}
