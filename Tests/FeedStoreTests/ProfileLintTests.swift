import Testing

@testable import FeedStore

/// The lint with a widget profile: WidgetBridge's README example and each profile check.
@Suite struct ProfileLintTests {
    /// WidgetBridge's README: quotes with `id` and `text`, photos named `"${quote.id}.jpg"`.
    static func readmeFeed(quotes: Int = 20) -> String {
        let items = (1...quotes).map { #"{"id":"q\#($0)","text":"Quote \#($0)"}"# }.joined(separator: ",")
        return #"{"quotes":[\#(items)],"emptyText":"No quotes yet"}"#
    }

    static func photos(_ numbers: ClosedRange<Int>) -> [FeedLint.Asset] {
        numbers.map { FeedLint.Asset(name: "q\($0).jpg", width: 300, height: 200) }
    }

    private func report(_ json: String, _ assets: [FeedLint.Asset], stated: String? = nil) throws -> LintReport {
        let payload = try JSONDocument.parse(Array(json.utf8)).root
        let profile = try stated.map { try WidgetProfile(json: Array($0.utf8)) }
        let applied = LintProfile.applying(stated: profile, payload: payload, assetNames: assets.map(\.name))
        return FeedLint().report(payload: payload, assets: assets, limit: 100, profile: applied)
    }

    @Test func theReadmeExampleWithPhotosForHalfWarnsOnceForEachQuoteWithout() throws {
        for stated in [nil, #"{"items":"/quotes","title":"/text","image":"{id}.jpg","empty":"/emptyText"}"#] {
            let found = try report(Self.readmeFeed(), Self.photos(1...10), stated: stated)
            #expect(found.warnings.map(\.code) == Array(repeating: .itemImageMissing, count: 10), "\(found.warnings)")
            #expect(found.warnings.map(\.asset) == (11...20).map { "q\($0).jpg" })
            #expect(found.warnings.map(\.pointer) == (10...19).map { "/quotes/\($0)" })
            #expect(found.profile?.isInferred == (stated == nil))
        }
        let guessed = try report(Self.readmeFeed(), Self.photos(1...10)).profile
        #expect(guessed?.profile.items.text == "/quotes")
        #expect(guessed?.profile.image?.text == "{id}.jpg")
        #expect(guessed?.inferred == ["items", "image"])
    }

    @Test func aMissingFileIsOneWarningNotAlsoAssetNotFound() throws {
        let json = #"{"quotes":[{"photo":"q1.jpg"},{"photo":"photos/q2.jpg"}]}"#
        let found = try report(json, Self.photos(1...1), stated: #"{"items":"/quotes","image":"/photo"}"#)
        #expect(found.warnings.map(\.code) == [.itemImageMissing])
        #expect(found.warnings.first?.asset == "q2.jpg")
        let withoutProfile = try report(#"{"other":1,"a":[],"b":[]}"#, Self.photos(1...1))
        #expect(withoutProfile.profile == nil, "two arrays: nothing is inferred")
    }

    @Test func aStatedProfileChecksTitlesUnusedAssetsAndTheEmptyState() throws {
        let json = #"{"quotes":[{"id":"q1","text":"One"},{"id":"q2"}],"background":"bg.png"}"#
        let assets = Self.photos(1...3) + [FeedLint.Asset(name: "bg.png", width: 10, height: 10)]
        let stated = #"{"items":"/quotes","title":"/text","image":"{id}.jpg","empty":"/emptyText"}"#
        let found = try report(json, assets, stated: stated)
        #expect(
            found.warnings.map(\.code) == [.itemTitleMissing, .assetUnused, .emptyStateMissing], "\(found.warnings)")
        #expect(found.warnings[0].pointer == "/quotes/1")
        #expect(found.warnings[1].asset == "q3.jpg", "bg.png is named by the payload")
        #expect(found.warnings[2].pointer == "/emptyText")
        let missing = try report(json, assets, stated: #"{"items":"/cards","title":"/text"}"#)
        #expect(missing.warnings.map(\.code).contains(.itemsNotFound))
    }

    @Test func anInferredProfileDrivesOnlyTheImageCheck() throws {
        let json = #"{"quotes":[{"id":"q1"},{"id":"q2"},{"id":"q3"}]}"#
        let found = try report(json, Self.photos(1...2) + [FeedLint.Asset(name: "extra.jpg", width: 1, height: 1)])
        #expect(found.warnings.map(\.code) == [.assetUnreferenced, .itemImageMissing], "\(found.warnings)")
        #expect(found.warnings.last?.asset == "q3.jpg")
    }

    @Test func inferenceTakesOnlyAnUnambiguousRule() throws {
        func guess(_ json: String, _ names: [String]) throws -> InferredProfile? {
            InferredProfile(payload: try JSONDocument.parse(Array(json.utf8)).root, assetNames: names)
        }
        // A third of the items resolve: not "most", so no image rule.
        let third = try guess(#"{"q":[{"id":"a"},{"id":"b"},{"id":"c"}]}"#, ["a.jpg"])
        #expect(third?.profile.items.text == "/q")
        #expect(third?.profile.image == nil)
        // Two fields resolve equally: ambiguous.
        #expect(try guess(#"{"q":[{"id":"a","slug":"a"}]}"#, ["a.jpg"])?.profile.image == nil)
        // A pointer to a file name.
        #expect(try guess(#"{"q":[{"p":"img/a.png"},{"p":"b.png"}]}"#, ["a.png"])?.profile.image?.text == "/p")
        // One non-empty array among empty ones; an empty array alone.
        #expect(try guess(#"{"tags":[],"q":[{"id":"a"}]}"#, [])?.profile.items.text == "/q")
        #expect(try guess(#"{"quotes":[],"emptyText":"x"}"#, [])?.profile.items.text == "/quotes")
        #expect(try guess(#"[{"id":"a"}]"#, [])?.profile.items.text == "")
        #expect(try guess(#"{"a":[1,2]}"#, []) == nil)
    }
}
