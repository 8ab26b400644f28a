import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `GET /journal/reads` against the real server: reads counted per group, generation and answer
/// (the prepared answer and the routed one alike), and the last requests with what they served.
@Suite struct ReadHistoryTests {
    private func reads(_ client: HTTPTestClient, _ query: String = "") throws -> [String: Any] {
        let answer = try client.get("/journal/reads" + query)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    private func generations(_ history: [String: Any], group: String) -> [[String: Any]] {
        let groups = history["reads"] as? [[String: Any]] ?? []
        return groups.first { $0["group"] as? String == group }?["generations"] as? [[String: Any]] ?? []
    }

    @Test func readsAreCountedPerGenerationAndAnswer() throws {
        try withTestServer { (_, client) throws -> Void in
            let first = try client.put("/feeds/g", json: #"{"n":1}"#).json
            let tag = try client.get("/feeds/g").header("ETag") ?? ""
            // Repeated plain reads are answered from the prepared answer, before routing.
            for _ in 0..<3 { #expect(try client.get("/feeds/g").status == 200) }
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", tag)]).status == 304)
            #expect(try client.get("/feeds/g?schemaVersion=1").status == 200)
            let second = try client.put("/feeds/g", json: #"{"n":2}"#).json
            #expect(try client.get("/feeds/g").status == 200)
            #expect(try client.get("/feeds/nobody").status == 404)
            #expect(try client.get("/feeds/g?schemaVersion=7").status == 404)
            let history = try reads(client)
            let counted = generations(history, group: "g")
            #expect(
                counted.map { $0["generationId"] as? String }
                    == [first["generationId"], second["generationId"]].map { $0 as? String })
            #expect(counted.first?["ok"] as? Int == 5)
            #expect(counted.first?["notModified"] as? Int == 1)
            #expect(counted.last?["ok"] as? Int == 1)
            let groups = history["reads"] as? [[String: Any]] ?? []
            #expect(groups.first { $0["group"] as? String == "g" }?["notFound"] as? Int == 1)
            #expect(groups.first { $0["group"] as? String == "nobody" }?["notFound"] as? Int == 1)
            #expect(history["recentCapacity"] as? Int == RecentRequests.defaultCapacity)
        }
    }

    @Test func theRecentRequestsSayWhatWasServedToWhom() throws {
        try withTestServer(configure: { $0.faultLab = true }) { (_, client) throws -> Void in
            _ = try client.put("/feeds/g", json: #"{"n":1}"#)
            // corrupt-feed writes a broken generation over it: readers fall back to this one.
            let good = try client.put("/feeds/g", json: #"{"n":2}"#).json
            let fault = try client.request(
                "POST", "/feeds/g/faults", headers: [("Content-Type", "application/json")],
                body: Array(#"{"kind":"corrupt-feed"}"#.utf8))
            #expect(fault.status == 201, "\(fault.text)")
            #expect(try client.get("/feeds/g").header("X-Feed-Generation") == good["generationId"] as? String)
            #expect(try client.get("/feeds/g").status == 200)
            let history = try reads(client, "?limit=3")
            let recent = try #require(history["recent"] as? [[String: Any]])
            #expect(recent.count == 3)
            let newest = try #require(recent.first)
            #expect(newest["method"] as? String == "GET")
            #expect(newest["path"] as? String == "/feeds/g")
            #expect(newest["status"] as? Int == 200)
            #expect(newest["generationId"] as? String == good["generationId"] as? String)
            #expect(newest["fallbackReason"] as? String == "unparsable")
            #expect(newest["client"] as? String == "127.0.0.1")
            #expect(recent[2]["path"] as? String == "/feeds/g/faults")
            #expect(recent[2]["generationId"] is NSNull)
            let counted = generations(history, group: "g")
            #expect(counted.first?["fallbackServed"] as? Int == 2)
        }
    }

    @Test func refusalsAreInTheHistoryToo() throws {
        try withTestServer { (_, client) throws -> Void in
            // Refused from the head (415), by the router (404), and by the transport itself: a
            // length beside a coding is a framing conflict, answered before any route is asked.
            let typed = try client.request(
                "PUT", "/feeds/g", headers: [("Content-Type", "text/plain")], body: Array("x".utf8))
            #expect(typed.status == 415)
            #expect(try client.get("/nowhere").status == 404)
            let framing = try client.request(
                "POST", "/journal/verify", headers: [("Transfer-Encoding", "chunked")], body: Array("{}".utf8))
            #expect(framing.status == 400)
            let recent = try #require(try reads(client)["recent"] as? [[String: Any]])
            #expect(recent.map { $0["status"] as? Int } == [400, 404, 415])
            #expect(recent.map { $0["method"] as? String } == ["POST", "GET", "PUT"])
        }
    }

    @Test func groupNarrowsBothAndDeleteJournalStartsAgain() throws {
        try withTestServer(configure: { $0.journal = false }) { (_, client) throws -> Void in
            _ = try client.put("/feeds/a", json: #"{"n":1}"#)
            _ = try client.put("/feeds/b", json: #"{"n":1}"#)
            _ = try client.get("/feeds/a")
            _ = try client.get("/feeds/b/assets/none.png")
            _ = try client.get("/feeds/b")
            let narrowed = try reads(client, "?group=b")
            #expect((narrowed["reads"] as? [[String: Any]])?.map { $0["group"] as? String } == ["b"])
            #expect(
                (narrowed["recent"] as? [[String: Any]])?.map { $0["path"] as? String } == [
                    "/feeds/b", "/feeds/b/assets/none.png", "/feeds/b",
                ])
            let nobody = try reads(client, "?group=..")
            #expect((nobody["reads"] as? [Any])?.isEmpty == true && (nobody["recent"] as? [Any])?.isEmpty == true)
            #expect(try client.get("/journal/reads?limit=0").status == 400)
            // With --journal off there is no journal to empty; the reads start again all the same.
            #expect(try client.request("DELETE", "/journal").status == 204)
            let after = try reads(client)
            #expect((after["reads"] as? [[String: Any]])?.isEmpty == true)
            #expect((after["recent"] as? [[String: Any]])?.map { $0["path"] as? String } == ["/journal"])
            _ = try client.get("/feeds/a")
            #expect(generations(try reads(client), group: "a").first?["ok"] as? Int == 1)
        }
    }

    @Test func noRequestsAreKeptWhenAskedForNoneAndTheReadTokenGuardsThem() throws {
        try withTestServer(configure: {
            $0.recentRequests = 0
            $0.readToken = "reader"
        }) { (_, client) throws -> Void in
            let reader = [("Authorization", "Bearer reader")]
            #expect(try client.get("/journal/reads").status == 401)
            _ = try client.put("/feeds/g", json: #"{"n":1}"#, headers: reader)
            _ = try client.get("/feeds/g", headers: reader)
            let history = try client.get("/journal/reads", headers: reader).json
            #expect((history["recent"] as? [Any])?.isEmpty == true)
            #expect(history["recentCapacity"] as? Int == 0)
            #expect(generations(history, group: "g").first?["ok"] as? Int == 1)
        }
    }
}
