import FeedStore
import Testing

@Suite struct JSONPointerTests {
    let document = try! JSONParser.parse(Array(#"{"foo":["bar","baz"],"":0,"a/b":1,"m~n":8,"k":{"0":"x"}}"#.utf8))

    @Test(
        arguments: [
            ("", nil), ("/foo/0", "\"bar\""), ("/foo/1", "\"baz\""), ("/", "0"), ("/a~1b", "1"), ("/m~0n", "8"),
            ("/k/0", "\"x\""),
        ] as [(String, String?)])
    func resolvesRFC6901Examples(_ pointer: String, _ expected: String?) throws {
        let value = try #require(JSONPointer(pointer)?.resolve(in: document))
        if let expected {
            #expect(String(decoding: CompactJSON.bytes(value), as: UTF8.self) == expected)
        } else {
            #expect(value == document)
        }
    }

    @Test func refusesWhatIsNotThere() {
        #expect(JSONPointer("foo") == nil)
        #expect(JSONPointer("/a~2") == nil)
        #expect(JSONPointer("/~1\u{1F3FB}")?.tokens == ["/\u{1F3FB}"], "a modifier after ~1 stays a separate scalar")
        #expect(JSONPointer("/foo/01")?.resolve(in: document) == nil)
        #expect(JSONPointer("/foo/2")?.resolve(in: document) == nil)
        #expect(JSONPointer("/foo/-")?.resolve(in: document) == nil)
        #expect(JSONPointer("/nope")?.resolve(in: document) == nil)
    }
}
