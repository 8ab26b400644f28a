import Testing

@testable import FeedStore

/// Widget profiles read and refused, name templates, and a profile applied to a payload.
@Suite struct WidgetProfileTests {
    private func profile(_ json: String) throws(ProfileError) -> WidgetProfile {
        try WidgetProfile(json: Array(json.utf8))
    }

    private func refusal(_ json: String) -> ProfileError? {
        do {
            _ = try profile(json)
            return nil
        } catch {
            return error
        }
    }

    private func document(_ json: String) throws -> JSONNode {
        try JSONDocument.parse(Array(json.utf8)).root
    }

    @Test func aFullProfileIsReadAndWrittenBackInItsOrder() throws {
        let read = try profile(
            #"{"zone":"Europe/Berlin","image":"{id}.jpg","items":"/quotes","empty":"/emptyText","title":"/text","subtitle":"/by"}"#
        )
        #expect(read.items.text == "/quotes")
        #expect(read.image == .template(try NameTemplate("{id}.jpg")))
        #expect(
            String(decoding: read.fileBytes, as: UTF8.self)
                == #"{"items":"/quotes","title":"/text","subtitle":"/by","image":"{id}.jpg","empty":"/emptyText","zone":"Europe/Berlin"}"#
                + "\n")
        #expect(
            try profile(#"{"items":"/q","image":"/photo"}"#).image == .pointer(try .init("/photo", member: "image")))
        #expect(try profile(#"{"items":"/q","zone":"-05:30"}"#).zone == "-05:30")
    }

    @Test func everyRefusalNamesItsMember() {
        let cases: [(String, String)] = [
            (#"{"title":"/text"}"#, "items"),
            (#"{"items":"quotes"}"#, "items"),
            (#"{"items":"/q","title":"text"}"#, "title"),
            (#"{"items":"/q","subtitle":"/a~2"}"#, "subtitle"),
            (#"{"items":"/q","empty":"x"}"#, "empty"),
            (#"{"items":"/q","image":"{id.jpg"}"#, "image"),
            (#"{"items":"/q","image":"id}.jpg"}"#, "image"),
            (#"{"items":"/q","image":"{}.jpg"}"#, "image"),
            (#"{"items":"/q","image":"photo.jpg"}"#, "image"),
            (#"{"items":"/q","image":"photos/{id}.jpg"}"#, "image"),
            (#"{"items":"/q","zone":"Mars/Olympus"}"#, "zone"),
            (#"{"items":"/q","zone":"../../etc/passwd"}"#, "zone"),
            (#"{"items":"/q","zone":"+25:00"}"#, "zone"),
            (#"{"items":"/q","titel":"/text"}"#, "titel"),
            (#"{"items":1}"#, "items"),
            (#"["/q"]"#, ""),
            (#"{"items":"/q""#, ""),
        ]
        for (json, member) in cases {
            let error = refusal(json)
            #expect(error?.member == member, "\(json): \(String(describing: error))")
            #expect(error?.detail.isEmpty == false)
        }
        #expect(refusal(#"{"items":"/q","subtitle":"/a~2"}"#)?.detail.contains("'~'") == true, "the escape is named")
        #expect(refusal(#"{"items":"/q","zone":"+18:01"}"#)?.member == "zone", "offsets stop at 18 hours")
        let large = #"{"items":"/"# + String(repeating: "a", count: WidgetProfile.maxBytes) + #""}"#
        #expect(refusal(large)?.detail.contains("at most") == true)
    }

    @Test func aTemplateBuildsTheNameFromStringsAndIntegersOnly() throws {
        let template = try NameTemplate("card-{id}_{n}.png")
        #expect(template.fields == ["id", "n"])
        #expect(try template.name(for: document(#"{"id":"q1","n":7}"#)) == .success("card-q1_7.png"))
        #expect(try template.name(for: document(#"{"id":"q1","n":7.5}"#)) == .failure(.init("n")))
        #expect(try template.name(for: document(#"{"n":7}"#)) == .failure(.init("id")))
        #expect(try template.name(for: document(#""q1""#)) == .failure(.init("id")))
        let long = String(repeating: "é", count: 200)
        #expect(try template.name(for: document(#"{"id":"\#(long)","n":1}"#)) == .failure(.init("id", tooLong: true)))
        let huge = String(repeating: "a", count: 100_000)
        #expect(try template.name(for: document(#"{"id":"\#(huge)","n":1}"#)) == .failure(.init("id", tooLong: true)))
        #expect(throws: ProfileError.self) { try NameTemplate(String(repeating: "{id}", count: 64)) }
        #expect(throws: ProfileError.self) { try NameTemplate("{id}\t.jpg") }
        // Characters no asset name holds: the name could never be found.
        for never in [#"{id}\.jpg"#, "{id}:.jpg", "{id} .jpg", "{id}é.jpg", "q?{id}.jpg"] {
            #expect(throws: ProfileError.self, "\(never)") { try NameTemplate(never) }
        }
    }

    /// Only http(s) URLs are addresses an app fetches; any other scheme names nothing.
    @Test func onlyHTTPAddressesAreURLs() throws {
        let payload = try document(
            #"{"q":[{"p":"javascript:alert(1)"},{"p":"file:///etc/passwd.jpg"},{"p":"data:image/png;base64,AA"},"#
                + #"{"p":"http:foo.jpg"},{"p":"https://"},{"p":"HTTPS:/\\evil.example/x.jpg"},{"p":"Quote 1"},"#
                + #"{"p":"é.jpg"},{"p":"HTTPS://cdn.example/q.jpg"},{"p":"http://cdn.example/q"}]}"#)
        let items = WidgetItems(profile: try profile(#"{"items":"/q","image":"/p"}"#), payload: payload)
        let array = try #require(items.array)
        let images = (0..<10).map { items.item(array.element(at: $0)!, index: $0).image }
        for refused in images.prefix(8) {
            guard case .unnamed(let why) = refused else {
                Issue.record("\(refused) should name no file")
                continue
            }
            #expect(why.contains("names no image file"), "\(why)")
        }
        #expect(images[8] == .url("HTTPS://cdn.example/q.jpg"))
        #expect(images[9] == .url("http://cdn.example/q"))
    }

    @Test func anItemResolvesToWhatTheWidgetLooksUp() throws {
        let payload = try document(
            #"{"quotes":[{"id":"q1","text":"One","by":7,"photo":"photos/q1.jpg"},{"id":2,"text":"","photo":"https://cdn.example/p"}],"emptyText":"None"}"#
        )
        let stated = try profile(
            #"{"items":"/quotes","title":"/text","subtitle":"/by","image":"/photo","empty":"/emptyText"}"#)
        let items = WidgetItems(profile: stated, payload: payload)
        let array = try #require(items.array)
        let first = items.item(try #require(array.element(at: 0)), index: 0)
        #expect(first == .init(pointer: "/quotes/0", title: "One", subtitle: "7", image: .asset("q1.jpg")))
        let second = items.item(try #require(array.element(at: 1)), index: 1)
        #expect(second.title == nil, "an empty string is no title")
        #expect(second.image == .url("https://cdn.example/p"))
        #expect(items.emptyText == "None")
        var templated = stated
        templated.image = try .init("{id}.png")
        #expect(
            WidgetItems(profile: templated, payload: payload).item(try #require(array.element(at: 1)), index: 1).image
                == .asset("2.png"))
        #expect(WidgetItems(profile: try profile(#"{"items":"/emptyText"}"#), payload: payload).array == nil)
    }
}
