import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// Conditional writes, DELETE, listings, tokens, CORS, request ids and metrics, end to end.
@Suite struct HTTPContractTests {
    @Test func ifMatchPublishesOnlyOverTheExpectedGeneration() throws {
        try withTestServer { _, client in
            #expect(try client.put("/feeds/g", json: "[1]", headers: [("If-Match", "*")]).status == 412)
            let created = try client.put("/feeds/g", json: "[1]", headers: [("If-None-Match", "*")])
            #expect(created.status == 201)
            let tag = try #require(created.header("ETag"))
            let again = try client.put("/feeds/g", json: "[2]", headers: [("If-None-Match", "*")])
            #expect(again.status == 412)
            #expect(again.header("ETag") == tag)
            #expect(again.header("Content-Type") == "application/problem+json")
            let detail = again.json["detail"] as? String ?? ""
            #expect(detail.hasPrefix("If-None-Match: * asks for a group with no feed, and the served"), "\(detail)")
            let stale = try client.put("/feeds/g", json: "[2]", headers: [("If-Match", "\"stale\"")])
            #expect(stale.status == 412)
            #expect((stale.json["detail"] as? String)?.hasPrefix("If-Match names another tag, and the served") == true)
            #expect(
                try client.put("/feeds/g", json: "[2]", headers: [("If-Match", "W/\(tag)")]).status == 412,
                "weak tags never match a write")
            let updated = try client.put("/feeds/g", json: "[2]", headers: [("If-Match", tag)])
            #expect(updated.status == 201)
            #expect(try client.put("/feeds/g", json: "[3]", headers: [("If-Match", "junk")]).status == 400)
            #expect(
                try client.put("/feeds/g", json: "[3]", headers: [("If-Match", tag), ("If-None-Match", "*")]).status
                    == 412, "both must hold")
            #expect(
                try client.put("/feeds/g", json: "[3]", headers: [("If-Match", "")]).status == 412,
                "an empty list never matches")
            #expect(try client.get("/feeds/g").json["payload"] as? [Int] == [2])
        }
    }

    @Test func twoWritersWithTheSameIfMatchExactlyOneWins() throws {
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: #"{"v":0}"#).header("ETag"))
            for round in 0..<10 {
                let current = round == 0 ? tag : try #require(try client.get("/feeds/g").header("ETag"))
                let statuses = Lock<[Int]>([])
                let writers = (0..<2).map { writer in
                    Thread {
                        let status =
                            (try? HTTPTestClient(port: server.port).put(
                                "/feeds/g", json: #"{"v":\#(round),"w":\#(writer)}"#,
                                headers: [("If-Match", current)]
                            ).status) ?? -1
                        statuses.withLock { $0.append(status) }
                    }
                }
                for writer in writers { writer.start() }
                while statuses.withLock({ $0.count }) < 2 { usleep(1000) }
                #expect(statuses.withLock { $0.sorted() } == [201, 412], "round \(round)")
            }
        }
    }

    @Test func deleteClearsTheGroupAndHonoursIfMatch() throws {
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            #expect(try client.request("DELETE", "/feeds/g", headers: [("If-Match", "\"other\"")]).status == 412)
            #expect(try client.get("/feeds/g").status == 200)
            let deleted = try client.request("DELETE", "/feeds/g", headers: [("If-Match", tag)])
            #expect(deleted.status == 204)
            #expect(try client.get("/feeds/g").status == 404)
            #expect(try client.request("DELETE", "/feeds/g").status == 204, "idempotent")
            #expect(try client.request("DELETE", "/feeds/never-existed").status == 204)
            #expect(try client.request("DELETE", "/feeds/g", headers: [("If-Match", "*")]).status == 412)
            let left = try FileManager.default.contentsOfDirectory(atPath: server.options.root + "/g")
            #expect(!left.contains("current.json") && !left.contains("generations"), "\(left)")
            #expect(try client.put("/feeds/g", json: "[2]", headers: [("If-None-Match", "*")]).status == 201)
        }
    }

    @Test func listingsOfGroupsAndGenerations() throws {
        try withTestServer { server, client in
            _ = try client.put("/feeds/a", json: "[1]")
            let first = try client.put("/feeds/b", json: "[1]")
            let second = try client.put("/feeds/b", json: "[2]")
            let third = try client.put("/feeds/b?schemaVersion=2", json: "[3]")
            let root = server.options.root
            try FileManager.default.createDirectory(
                atPath: "\(root)/b/generations/1999999999999-deadbeef.tmp", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: "\(root)/b/generations/1000-0badc0de", withIntermediateDirectories: true)
            try Data("{".utf8).write(to: URL(fileURLWithPath: "\(root)/b/generations/1000-0badc0de/feed.json"))

            let groups = try #require(try client.get("/feeds").json["groups"] as? [[String: Any]])
            #expect(groups.map { $0["group"] as? String } == ["a", "b"])
            #expect(groups[1]["generationId"] as? String == third.json["generationId"] as? String)

            let listing = try client.get("/feeds/b/generations")
            #expect(listing.status == 200)
            let entries = try #require(listing.json["generations"] as? [[String: Any]])
            let states = Dictionary(uniqueKeysWithValues: entries.map { ($0["id"] as! String, $0["state"] as! String) })
            #expect(states[third.json["generationId"] as! String] == "served")
            #expect(states[second.json["generationId"] as! String] == "kept")
            #expect(states[first.json["generationId"] as! String] == "retired")
            #expect(states["1999999999999-deadbeef.tmp"] == "in-progress")
            #expect(states["1000-0badc0de"] == "corrupt")
            #expect(
                (entries.first { $0["id"] as? String == "1000-0badc0de" }?["reason"] as? String)?.contains(
                    "does not parse") == true)

            let forSchema1 = try #require(
                try client.get("/feeds/b/generations?schemaVersion=1").json["generations"] as? [[String: Any]])
            #expect(
                forSchema1.first { $0["id"] as? String == third.json["generationId"] as? String }?["state"] as? String
                    == "wrong-schema")
            #expect(try client.get("/feeds/nope/generations").status == 404)
            #expect(try client.request("DELETE", "/feeds/a").status == 204)
            #expect(try client.get("/feeds/a/generations").status == 404, "a cleared group has no generations resource")
            #expect(try client.head("/feeds/b/generations").status == 200)
        }
    }

    @Test func tokensGuardWritesAndOptionallyReads() throws {
        try withTestServer(configure: {
            $0.token = "s3cret"
            $0.readToken = "reader"
        }) { _, client in
            let denied = try client.put("/feeds/g", json: "[1]")
            #expect(denied.status == 401)
            #expect(denied.header("WWW-Authenticate") == "Bearer realm=\"feed-server\"")
            let wrong = try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer nope")])
            #expect(wrong.status == 401)
            #expect(wrong.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(
                try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer reader")]).status == 401)
            #expect(
                try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer s3cret")]).status == 201)
            #expect(try client.request("DELETE", "/feeds/g").status == 401)
            #expect(try client.get("/feeds/g").status == 401)
            #expect(try client.get("/feeds/g", headers: [("Authorization", "Bearer reader")]).status == 200)
            #expect(try client.get("/feeds/g", headers: [("Authorization", "bearer s3cret")]).status == 200)
            #expect(try client.get("/healthz").status == 200)
        }
        try withTestServer(configure: { $0.token = "s3cret" }) { _, client in
            let open = try client.get("/feeds")
            #expect(open.status == 200, "reads stay open without --read-token")
        }
    }

    @Test func corsRequestIdsAndMetrics() throws {
        try withTestServer(configure: { $0.corsOrigin = "http://localhost:3000" }) { _, client in
            let preflight = try client.request(
                "OPTIONS", "/feeds/g",
                headers: [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "PUT")])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            #expect(preflight.header("Access-Control-Allow-Methods") == "DELETE, GET, HEAD, PUT")
            let published = try client.put("/feeds/g", json: "[1]")
            #expect(published.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            #expect(published.header("Access-Control-Expose-Headers")?.contains("ETag") == true)

            // X-Request-Id is echoed when the client sends a sane one, on cached reads, 304s,
            // errors and writes alike; a client that sends none (or an unsafe one) gets none
            // (the access log has a generated id for it).
            #expect(published.header("X-Request-Id") == nil)
            #expect(try client.get("/feeds/g").header("X-Request-Id") == nil)
            let tag = try #require(try client.get("/feeds/g").header("ETag"))
            for (path, headers) in [
                ("/feeds/g", [("X-Request-Id", "trace-42")]),
                ("/feeds/g", [("X-Request-Id", "trace-42"), ("If-None-Match", tag)]),
                ("/nope", [("X-Request-Id", "trace-42")]),
            ] {
                let answer = try client.get(path, headers: headers)
                #expect(answer.header("X-Request-Id") == "trace-42")
                #expect(answer.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            }
            // A cached read right after an echoed one is the shared answer again: no id of another client's.
            #expect(try client.get("/feeds/g").header("X-Request-Id") == nil)
            #expect(
                try client.get("/feeds/g", headers: [("X-Request-Id", "bad id\u{7f}")]).header("X-Request-Id") == nil)

            #expect(
                try client.put("/feeds/g", json: "[1]", headers: [("X-Request-Id", "write.7")]).header("X-Request-Id")
                    == "write.7")
            _ = try client.get("/nope")
            let metrics = try client.get("/metrics")
            #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let text = metrics.text
            #expect(
                text.contains(#"feedserver_http_requests_total{route="/feeds/{group}",method="PUT",status="201"} 1"#))
            #expect(text.contains(#"feedserver_http_requests_total{route="unmatched",method="GET",status="404"} 2"#))
            // Cached reads answered with the shared prepared response are counted all the same.
            #expect(
                text.contains(#"feedserver_http_requests_total{route="/feeds/{group}",method="GET",status="200"} 5"#))
            #expect(
                text.contains(#"feedserver_http_requests_total{route="/feeds/{group}",method="GET",status="304"} 1"#))
            #expect(text.contains(#"feedserver_publishes_total{result="published"} 1"#))
            #expect(text.contains(#"feedserver_publishes_total{result="unchanged"} 1"#))
            #expect(text.contains("feedserver_publish_duration_seconds_count 2"))
            #expect(text.contains("feedserver_open_waiters 0"))
        }
    }

    @Test func fallbacksAreCounted() throws {
        try withTestServer { server, client in
            _ = try client.put("/feeds/g", json: "[1]")
            let second = try client.put("/feeds/g", json: "[2]")
            try FileManager.default.removeItem(
                atPath: "\(server.options.root)/g/generations/\(second.json["generationId"] as! String)")
            _ = try client.get("/feeds/g")
            #expect(try client.get("/metrics").text.contains("feedserver_fallbacks_served_total 1"))
        }
    }
}
