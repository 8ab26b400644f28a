import Foundation
import Testing

@testable import FeedServerKit

/// `invisible-change` in a publish answer and `GET /feeds/{group}/refreshes` against the real
/// server and its journal.
@Suite struct RefreshRoutesTests {
    private func publish(_ client: HTTPTestClient, _ text: String, stamp: Int) throws -> [String] {
        let answer = try client.put("/feeds/g", json: #"{"quotes":[{"text":"\#(text)"}],"stamp":\#(stamp)}"#)
        return (answer.json["warnings"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
    }

    @Test func aPublishThatShowsNothingNewSaysSoAndTheBudgetRunsOut() throws {
        try withTestServer(configure: { $0.iosReloadBudget = 2 }) { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes","title":"/text"}"#).status == 201)
            #expect(try publish(client, "one", stamp: 1) == [])
            #expect(try publish(client, "one", stamp: 2) == ["invisible-change"], "only the stamp changed")
            #expect(try publish(client, "two", stamp: 3) == [])
            #expect(try publish(client, "two", stamp: 3) == [], "unchanged: no reload asked, no warning")
            let refreshes = try client.get("/feeds/g/refreshes?hours=1")
            #expect(refreshes.status == 200)
            let publishes = try #require(refreshes.json["publishes"] as? [[String: Any]])
            #expect(publishes.map { $0["ios"] as? String } == ["reloaded", "reloaded", "over-budget"])
            #expect(publishes.map { $0["visible"] as? Bool } == [true, false, true])
            let spans = try #require(refreshes.json["staleSpans"] as? [[String: Any]])
            #expect(spans.count == 1)
            #expect(spans.first?["missed"] as? String == publishes.last?["generationId"] as? String)
            #expect(spans.first?["showing"] as? String == publishes[1]["generationId"] as? String)
            let strict = try client.put("/feeds/g?lint=strict", json: #"{"quotes":[{"text":"two"}],"stamp":4}"#)
            #expect(strict.status == 422, "a wasted reload is a warning like any other")
            let detail = (strict.json["warnings"] as? [[String: Any]])?.first?["detail"] as? String ?? ""
            let served = publishes.last?["generationId"] as? String ?? "?"
            #expect(detail.contains("as generation \(served), served before it, had them"), "\(detail)")
            #expect(detail.contains("GET /feeds/g/refreshes"), "\(detail)")
            // A new test starts from an empty ledger.
            #expect(try client.request("DELETE", "/journal").status == 204)
            #expect((try client.get("/feeds/g/refreshes").json["publishes"] as? [Any])?.isEmpty == true)
            #expect(try client.get("/feeds/g/refreshes?hours=0").status == 400)
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            #expect(try client.get("/feeds/g/refreshes").status == 404, "a group's ledger while it has a feed")
        }
    }
}
