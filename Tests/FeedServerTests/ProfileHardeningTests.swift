import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// What a hostile client or a hand-made `profile.json` can do to the profile routes, the lint and
/// the timeline: each answer stays bounded, clear and prompt.
@Suite struct ProfileHardeningTests {
    @Test func aLongTemplateOrFieldNeverBuildsALongName() throws {
        try withTestServer { (_, client) throws -> Void in
            let text = String(repeating: "Lorem ipsum ", count: 80)
            let items = (0..<24).map { #"{"id":"q\#($0)","text":"\#(text)"}"# }.joined(separator: ",")
            #expect(try client.put("/feeds/long", json: #"{"q":[\#(items)]}"#).status == 201)
            let template = String(repeating: "{text}", count: 1_000)
            let refused = try client.get("/feeds/long/timeline?items=/q&image=\(template)")
            #expect(refused.status == 422, "a template longer than a file name")
            let answer = try client.get("/feeds/long/timeline?items=/q&image={text}.jpg&hours=2")
            #expect(answer.status == 200)
            #expect(answer.body.count < 20_000, "\(answer.body.count) bytes")
            let warning = (answer.json["entries"] as? [[String: Any]])?.first?["warning"] as? [String: Any]
            #expect((warning?["detail"] as? String)?.contains("longer than a file name") == true)
        }
    }

    @Test func titlesAndWarningsCountTowardTheTimelinesLimit() throws {
        try withTestServer(configure: { $0.maxPayloadBytes = 64 << 10 }) { (_, client) throws -> Void in
            let text = String(repeating: "x", count: 2_000)
            let items = (0..<24).map { #"{"id":"q\#($0)","text":"\#(text)"}"# }.joined(separator: ",")
            #expect(try client.put("/feeds/g", json: #"{"q":[\#(items)]}"#).status == 201)
            #expect(try client.get("/feeds/g/timeline?items=/q&hours=24").status == 200)
            let doubled = try client.get("/feeds/g/timeline?items=/q&hours=24&title=/text&subtitle=/text")
            #expect(doubled.status == 422)
            #expect(doubled.json["type"] as? String == "https://feed-server.invalid/problems/timeline-too-large")
        }
    }

    @Test func aFIFOOrBrokenFileAsTheProfileAnswersAtOnceAndSaysSo() throws {
        let scratch = ScratchDirectory()
        try withTestServer(root: scratch.path) { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1"}]}"#).status == 201)
            #expect(mkfifo(scratch.path + "/g/profile.json", 0o644) == 0)
            let read = try client.get("/feeds/g/profile")
            #expect(read.status == 500)
            #expect(read.json["type"] as? String == "https://feed-server.invalid/problems/unreadable-profile")
            #expect((read.json["detail"] as? String)?.contains(scratch.path) == false)
            let published = try client.put("/feeds/g", json: #"{"quotes":[{"id":"q2"}]}"#)
            #expect(published.status == 201)
            let codes = (published.json["warnings"] as? [[String: Any]])?.map { $0["code"] as? String }
            #expect(codes == ["profile-unreadable"])
            #expect(try client.put("/feeds/g?lint=strict", json: #"{"quotes":[{"id":"q3"}]}"#).status == 422)
            #expect(try client.get("/feeds/g/warnings").text.contains("profile-unreadable"))
            #expect(try client.get("/feeds/g/timeline").status == 500)
            #expect(try client.get("/feeds/g/archive").status == 500, "an archive never drops the profile silently")
            // A PUT replaces whatever is there.
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes"}"#).status == 200)
            try Data("{".utf8).write(to: URL(fileURLWithPath: scratch.path + "/g/profile.json"))
            #expect(try client.get("/feeds/g/profile").status == 500)
        }
    }

    @Test func whatIsAcceptedReadsBackAndTemplatesHoldNoControlCharacters() throws {
        try withTestServer { (_, client) throws -> Void in
            let padding = WidgetProfile.maxBytes - #"{"items":"/"}"#.utf8.count
            let exact = #"{"items":"/\#(String(repeating: "a", count: padding))"}"#
            #expect(exact.utf8.count == WidgetProfile.maxBytes)
            let refused = try client.put("/feeds/g/profile", json: exact)
            #expect(refused.status == 422, "stored with its newline it would not read back")
            let fits = #"{"items":"/\#(String(repeating: "a", count: padding - 1))"}"#
            #expect(try client.put("/feeds/g/profile", json: fits).status == 201)
            #expect(try client.get("/feeds/g/profile").status == 200)
            #expect(try client.put("/feeds/h/profile", json: #"{"items":"/q","image":"{a\u0000b}.jpg"}"#).status == 422)
        }
    }

    @Test func zoneParametersOverrideTheProfileAndSaySo() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1"},{"id":"q2"}]}"#).status == 201)
            #expect(try client.get("/feeds/g/timeline?hours=1").json["zone"] as? String == "UTC")
            #expect(try client.put("/feeds/flat", json: #"{"a":1}"#).status == 201)
            #expect(try client.get("/feeds/flat/timeline").status == 422, "nothing to show: no profile, no array")
            let bad = try client.get("/feeds/g/timeline?hours=1&image={id")
            #expect(bad.status == 422)
            #expect(bad.json["member"] as? String == "image")
            #expect(
                try client.put("/feeds/g/profile", json: #"{"items":"/quotes","zone":"Europe/Berlin"}"#).status == 201)
            let stored = try client.get("/feeds/g/timeline?hours=1&start=0")
            #expect(stored.json["zone"] as? String == "Europe/Berlin")
            #expect((stored.json["profile"] as? [String: Any])?["source"] as? String == "stored")
            let offset = try client.get("/feeds/g/timeline?hours=1&start=0&zoneOffsetSeconds=3600")
            #expect(offset.json["zone"] as? String == "+01:00")
            let profile = offset.json["profile"] as? [String: Any]
            #expect(profile?["zone"] as? String == "+01:00")
            #expect(profile?["source"] as? String == "query")
            let both = try client.get("/feeds/g/timeline?hours=1&start=0&zoneOffsetSeconds=3600&zone=Asia/Kolkata")
            #expect(both.json["zone"] as? String == "Asia/Kolkata")
        }
    }

    @Test func theTimelinesWarningIsThePublishAnswers() throws {
        try withTestServer { (_, client) throws -> Void in
            let published = try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1"}]}"#)
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes","image":"{id}.jpg"}"#).status == 201)
            let linted = try client.get("/feeds/g/warnings").json["warnings"] as? [[String: Any]]
            let entry = (try client.get("/feeds/g/timeline?hours=1").json["entries"] as? [[String: Any]])?.first
            let warning = entry?["warning"] as? [String: Any]
            #expect(published.status == 201)
            #expect(warning?["pointer"] as? String == "/quotes/0")
            #expect(warning?["detail"] as? String == linted?.first?["detail"] as? String)
            #expect(warning?["asset"] as? String == "q1.jpg")
        }
    }
}
