import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `/journal` and `/journal/verify` against the real server, its files and the offline CLI.
@Suite struct JournalRoutesTests {
    private func entries(_ client: HTTPTestClient, _ query: String = "") throws -> [[String: Any]] {
        try client.get("/journal" + query).json["entries"] as? [[String: Any]] ?? []
    }

    private func verify(
        _ client: HTTPTestClient, _ json: String, headers: [(String, String)] = []
    ) throws -> WireResponse {
        try client.request(
            "POST", "/journal/verify", headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8)
        )
    }

    /// The entry is in the file before the answer leaves: a crash right after, or another process
    /// reading the journal (a second server on the root, a CI step), never misses a write a
    /// client saw answered.
    @Test func anAnsweredWriteIsInTheJournalFileAlready() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try withTestServer(root: root) { (_, client) throws -> Void in
            for n in 0..<20 {
                let published = try client.put("/feeds/g", json: #"{"n":\#(n)}"#)
                let ids = try JournalFile(root: root).entries().map(\.generationId)
                #expect(ids.last == published.json["generationId"] as? String, "publish \(n)")
            }
        }
    }

    @Test func everyWriteIsRecordedWithItsOutcome() throws {
        try withTestServer(configure: { $0.faultLab = true }) { (_, client) throws -> Void in
            let published = try client.put(
                "/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#,
                headers: [("X-Request-Id", "ci-42"), ("User-Agent", "okhttp/4.12.0")])
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#).status == 200)
            #expect(try client.put("/feeds/g?lint=strict", json: #"{"photo":"sun.png"}"#).status == 422)
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes"}"#).status == 201)
            _ = try client.request(
                "POST", "/feeds/g/faults", headers: [("Content-Type", "application/json")],
                body: Array(#"{"kind":"corrupt-feed"}"#.utf8))
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            let journal = try entries(client)
            #expect(
                journal.map { $0["kind"] as? String } == [
                    "delete", "fault", "profile", "publish", "publish", "publish",
                ])
            #expect(
                journal.map { $0["result"] as? String } == [
                    "deleted", "corrupt-feed", "stored", "refused", "unchanged", "published",
                ])
            let first = try #require(journal.last)
            #expect(first["generationId"] as? String == published.json["generationId"] as? String)
            #expect(first["fingerprint"] as? String == published.json["fingerprint"] as? String)
            #expect(first["status"] as? Int == 201)
            #expect(first["requestId"] as? String == "ci-42")
            #expect(first["userAgent"] as? String == "okhttp/4.12.0")
            #expect(first["client"] as? String == "127.0.0.1")
            #expect(first["schemaVersion"] as? Int == 1)
            #expect((first["payload"] as? [String: Any])?["quotes"] != nil)
            let refused = journal[3]
            #expect(refused["problem"] as? String == "platform-limits")
            #expect(refused["warnings"] as? [String] == ["asset-not-found"])
            #expect((refused["payload"] as? [String: Any])?["photo"] as? String == "sun.png")
            #expect(try entries(client, "?kind=publish&result=published").count == 1)
            #expect(try client.get("/journal?kind=nope").status == 400)
        }
    }

    @Test func verifyAnswers200WhenItHoldsAnd422WithNearMissesWhenNot() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#).status == 201)
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"text":"two"}]}"#).status == 201)
            let holds = try verify(
                client, #"{"group":"g","kind":"publish","result":"published","count":{"exactly":2}}"#)
            #expect(holds.status == 200)
            #expect(holds.json["matched"] as? Int == 2)
            let fails = try verify(client, #"{"group":"g","payload":{"/quotes/0/text":"three"}}"#)
            #expect(fails.status == 422)
            #expect(fails.header("Content-Type") == "application/problem+json")
            #expect(fails.json["matched"] as? Int == 0)
            let misses = try #require(fails.json["nearMisses"] as? [[String: Any]])
            #expect(misses.first?["differences"] as? [String] == [#"/quotes/0/text is "two", not "three""#])
            #expect(try verify(client, #"{"grop":"g"}"#).json["member"] as? String == "grop")
            #expect(try client.request("DELETE", "/journal").status == 204)
            #expect(try verify(client, #"{"group":"g","count":{"exactly":0}}"#).status == 200)
        }
    }

    @Test func verifyTakesTheReadTokenAndDeleteTheWriteToken() throws {
        try withTestServer(configure: {
            $0.token = "writer"
            $0.readToken = "reader"
        }) { (_, client) throws -> Void in
            let reader = [("Authorization", "Bearer reader")]
            #expect(try verify(client, #"{"count":{"atLeast":0}}"#).status == 401)
            #expect(try verify(client, #"{"count":{"atLeast":0}}"#, headers: reader).status == 200)
            #expect(try client.get("/journal", headers: reader).status == 200)
            #expect(try client.request("DELETE", "/journal", headers: reader).status == 401)
            #expect(
                try client.request("DELETE", "/journal", headers: [("Authorization", "Bearer writer")]).status == 204)
        }
    }

    @Test func theJournalOutlivesTheServerAndTakesTheOfflineCLIsPublishes() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try withTestServer(root: root) { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#).status == 201)
        }
        let payload = scratch.path + "/payload.json"
        try Data(#"{"n":2}"#.utf8).write(to: URL(fileURLWithPath: payload))
        let cli = try CommandRun.run(["publish", "--root", root, "g", payload])
        #expect(cli.status == 0, "\(cli.stderr)")
        try withTestServer(root: root) { (_, client) throws -> Void in
            let journal = try entries(client)
            #expect(journal.map { $0["client"] as? String } == ["cli", "127.0.0.1"])
            #expect(journal.first?["status"] as? Int == 0)
            #expect(try verify(client, #"{"payload":{"/n":2}}"#).status == 200)
        }
        try withTestServer(root: root, configure: { $0.journal = false }) { (_, client) throws -> Void in
            #expect(try client.get("/journal").status == 404)
            #expect(try client.put("/feeds/g", json: #"{"n":3}"#).status == 201)
        }
        let file = JournalFile(root: root)
        #expect(try file.entries().count == 2, "--journal off records nothing")
    }

    @Test func refusedCLIPublishesAndSeedGroupsNotPublishedAreRecordedToo() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let seed = scratch.path + "/seed"
        try FileManager.default.createDirectory(atPath: seed + "/broken", withIntermediateDirectories: true)
        try Data(#"{"n":"#.utf8).write(to: URL(fileURLWithPath: seed + "/broken/payload.json"))
        try withTestServer(root: root, configure: { $0.seed = seed }) { (_, client) throws -> Void in
            let journal = try entries(client)
            #expect(journal.map { $0["kind"] as? String } == ["seed"])
            #expect(journal.first?["result"] as? String == "refused")
            #expect(journal.first?["group"] as? String == "broken")
        }
        let payload = scratch.path + "/payload.json"
        try Data(#"{"n":"#.utf8).write(to: URL(fileURLWithPath: payload))
        let cli = try CommandRun.run(["publish", "--root", root, "g", payload])
        #expect(cli.status != 0)
        try withTestServer(root: root) { (_, client) throws -> Void in
            let refused = try #require(try entries(client).first)
            #expect(refused["kind"] as? String == "publish")
            #expect(refused["client"] as? String == "cli")
            #expect(refused["result"] as? String == "refused")
            #expect(refused["problem"] as? String == "invalid-json")
        }
    }

    @Test func costlyVerificationsStopAtTheirDeadlineOnALaneOfTheirOwn() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        // Forty entries whose kept payload holds sixteen 4,000-byte texts: sixteen patterns of 256
        // atoms take about 0.1 s per entry, past the route's 2 s.
        let text = String(String(repeating: "The quick brown fox. ", count: 200).prefix(4_000))
        let quotes = (0..<16).map { _ in #"{"text":"\#(text)"}"# }.joined(separator: ",")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let file = JournalFile(root: root)
        for n in 0..<40 {
            var entry = JournalEntry(at: Int64(n), kind: .publish, result: "published", group: "g", status: 201)
            entry.keep(payload: Array(#"{"quotes":[\#(quotes)]}"#.utf8))
            try file.append(entry)
        }
        let patterns = (0..<16).map { #""/quotes/\#($0)/text":".{0,255}~""# }.joined(separator: ",")
        let costly = #"{"payloadMatches":{\#(patterns)}}"#
        try withTestServer(root: root) { (_, client) throws -> Void in
            // Two at once: on the main work pool, they would hold both its threads.
            let answers = Lock<[(Int, String)]>([])
            let done = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: done) {
                    let answer = try? verify(client, costly)
                    answers.withLock { $0.append((answer?.status ?? 0, answer?.json["type"] as? String ?? "")) }
                }
            }
            Thread.sleep(forTimeInterval: 0.3)
            #expect(try client.put("/feeds/p", json: #"{"n":1}"#).status == 201)
            #expect(answers.withLock { $0.isEmpty }, "the publish was answered before any verification")
            done.wait()
            let all = answers.withLock { $0 }
            #expect(all.count == 2)
            #expect(all.allSatisfy { $0.0 == 422 && $0.1.hasSuffix("/verification-too-costly") }, "\(all)")
        }
    }

    @Test func theCLIsFirstPublishOnARootAServerStartedIsRecorded() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try withTestServer(root: root) { (_, client) throws -> Void in
            // A filter whose value does not decode would read as absent and match everything.
            #expect(try client.get("/journal?group=%ff").status == 400)
            #expect(try client.get("/journal/reads?group=%C3%28").status == 400)
            // A name that does not decode names nothing a route could mean: refused, not ignored.
            let name = try client.get("/feeds?%ff=1")
            #expect(name.status == 400)
            #expect(name.text.contains("%ff"))
            #expect(try client.get("/feeds?%C3%A9=1").status == 200, "a name that decodes is read (and ignored)")
        }
        let payload = scratch.path + "/payload.json"
        try Data(#"{"n":1}"#.utf8).write(to: URL(fileURLWithPath: payload))
        #expect(try CommandRun.run(["publish", "--root", root, "g", payload]).status == 0)
        #expect(try JournalFile(root: root).entries().map(\.client) == ["cli"])
    }

    @Test func pagesFollowEachOtherWithoutGapsOrRepeats() {
        var journal: [JournalEntry] = []
        for n in 0..<25 {
            journal.append(JournalEntry(at: Int64(n / 4), kind: .publish, result: "r\(n)", group: "g", status: 201))
        }
        var seen: [String] = []
        var cursor: JournalCursor?
        repeat {
            let page = JournalCursor.page(journal, after: cursor, limit: 3)
            seen += page.entries.map(\.result)
            cursor = page.next
        } while cursor != nil
        #expect(seen == journal.reversed().map(\.result))
    }
}
