import FeedStore
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// Deadlines and limits that keep slow or greedy clients from starving the rest.
@Suite struct SlowClientTests {
    @Test func aClientTricklingItsHeadIsCutAtTheHeaderDeadline() throws {
        try withTestServer(configure: {
            $0.transport.headerTimeoutSeconds = 1
            $0.transport.maxConnections = 4
        }) { server, client in
            // Four connections hold every slot by sending one header line now and then.
            let tricklers = try (0..<4).map { _ in try HTTPTestConnection(port: server.port) }
            for connection in tricklers { try connection.sendRaw(Array("GET /healthz HTTP/1.1\r\n".utf8)) }
            for round in 0..<3 {
                usleep(400_000)
                for connection in tricklers { try? connection.sendRaw(Array("X-Slow-\(round): 1\r\n".utf8)) }
            }
            for connection in tricklers { #expect(connection.isClosedByPeer(within: 3), "cut at the head deadline") }
            // A fresh client gets a slot again.
            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func aBodyArrivingTooSlowlyIsCut() throws {
        try withTestServer(configure: {
            $0.transport.headerTimeoutSeconds = 1
            $0.transport.minBodyBytesPerSecond = 10_000
        }) { server, client in
            let connection = try HTTPTestConnection(port: server.port)
            try connection.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n["
                        .utf8))
            for _ in 0..<8 {
                usleep(250_000)
                try? connection.sendRaw(Array("1,".utf8))
            }
            #expect(connection.isClosedByPeer(within: 3))
            #expect(try client.get("/feeds/g").status == 404, "nothing published")
        }
    }

    /// The minimum rate holds for every window of the head deadline, not on average since the
    /// body began: on average, a burst followed by a trickle would keep its slot (and its share of
    /// --max-inflight-bytes) for as long as the burst covered the average.
    @Test func aBurstThenATrickleIsCutWithinTwoWindows() throws {
        try withTestServer(configure: {
            $0.transport.headerTimeoutSeconds = 1
            $0.transport.minBodyBytesPerSecond = 10_000
        }) { server, client in
            let connection = try HTTPTestConnection(port: server.port)
            try connection.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n["
                        .utf8))
            // 200 KB: 200 s of the minimum on average.
            try connection.sendRaw(Array(String(repeating: "1,", count: 100_000).utf8))
            let started = Date()
            var closed = false
            while !closed, Date().timeIntervalSince(started) < 6 {
                try? connection.sendRaw(Array("1,".utf8))
                closed = connection.isClosedByPeer(within: 1)  // waits up to a second: a trickle
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(closed && elapsed < 3.5, "cut after \(elapsed) s")
            #expect(try client.get("/feeds/g").status == 404, "nothing published")
        }
    }

    @Test func aPromptClientIsNeverCut() throws {
        try withTestServer(configure: { $0.transport.headerTimeoutSeconds = 1 }) { server, _ in
            let connection = try HTTPTestConnection(port: server.port)
            // A long-poll is being answered, not waiting for a head: it outlives the deadline.
            let tag = try #require(try HTTPTestClient(port: server.port).put("/feeds/g", json: "[1]").header("ETag"))
            let started = Date()
            let response = try connection.request("GET", "/feeds/g?wait=2.5", headers: [("If-None-Match", tag)])
            #expect(response.status == 304)
            #expect(Date().timeIntervalSince(started) >= 2.5)
        }
    }

    @Test func uploadsBeyondTheInflightLimitGet503WithRetryAfter() throws {
        try withTestServer(configure: { $0.transport.maxInflightBytes = 200_000 }) { server, client in
            // One upload holds 150 KB of the limit while its body is still arriving.
            let holder = try HTTPTestConnection(port: server.port)
            try holder.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 150000\r\n\r\n["
                        .utf8))
            try waitUntil { server.daemon.inflightBytes >= 150_000 }
            let refused = try HTTPTestConnection(port: server.port).request(
                "PUT", "/feeds/h", headers: [("Content-Type", "application/json")],
                body: Array(("[" + String(repeating: "1,", count: 40_000) + "1]").utf8))
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") != nil)
            // Small uploads still fit.
            #expect(try client.put("/feeds/small", json: "[1]").status == 201)
            withExtendedLifetime(holder) {}
        }
    }

    @Test func waitersBeyondTheirLimitGet503() throws {
        try withTestServer(configure: { $0.maxWaiters = 2 }) { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let parked = try (0..<2).map { _ in try HTTPTestConnection(port: server.port) }
            for connection in parked {
                try connection.sendRaw(
                    Array("GET /feeds/g?wait=30 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n".utf8))
            }
            try waitUntil { try client.get("/metrics").text.contains("feedserver_open_waiters 2") }
            let third = try client.get("/feeds/g?wait=30", headers: [("If-None-Match", tag)])
            #expect(third.status == 503)
            #expect(third.header("Retry-After") != nil)
            #expect(try client.get("/feeds/g/events").status == 503)
            #expect(try client.get("/feeds/g").status == 200, "plain reads are unaffected")
        }
    }

    @Test func aKeyWithoutAReadableGenerationIsReadAgainAtMostOnceASecond() throws {
        let scratch = ScratchDirectory()
        let store = FeedStore(root: scratch.path)
        let published = try store.publish(group: "g", payloadJSON: Array("[1]".utf8))
        let feed = "\(scratch.path)/g/generations/\(published.generationId)/feed.json"
        let good = try Data(contentsOf: URL(fileURLWithPath: feed))
        try Data("{".utf8).write(to: URL(fileURLWithPath: feed))  // torn in place: nothing readable
        let cache = FeedResponseCache(store: store)
        let key = FeedResponseCache.Key(group: "g", schemaVersion: nil)
        guard case .noFeed = cache.lookup(key) else {
            Issue.record("expected no feed")
            return
        }
        try good.write(to: URL(fileURLWithPath: feed))  // repaired in place: no pointer change
        guard case .noFeed = cache.lookup(key) else {
            Issue.record("re-read within the second")
            return
        }
        usleep(1_100_000)
        guard case .feed = cache.lookup(key) else {
            Issue.record("read again after a second")
            return
        }
    }
}

/// Listing answers are cached, and never stale past a change of the folder.
@Suite struct ListingCacheTests {
    @Test func generationsFollowPublishesAtOnceAndInPlaceDamageWithinASecond() throws {
        try withTestServer { server, client in
            let first = try #require(try client.put("/feeds/g", json: "[1]").json["generationId"] as? String)
            #expect((try client.get("/feeds/g/generations").json["served"] as? String) == first)
            #expect((try client.get("/feeds/g/generations").json["served"] as? String) == first, "cached")
            let second = try #require(try client.put("/feeds/g", json: "[2]").json["generationId"] as? String)
            #expect(
                (try client.get("/feeds/g/generations").json["served"] as? String) == second,
                "a publish is seen at once")
            // The kept generation is torn in place: no folder entry changes.
            try Data("{".utf8).write(
                to: URL(fileURLWithPath: "\(server.options.root)/g/generations/\(first)/feed.json"))
            try waitUntil(seconds: 3) {
                let generations = try client.get("/feeds/g/generations").json["generations"] as? [[String: Any]] ?? []
                return generations.first { $0["id"] as? String == first }?["state"] as? String == "corrupt"
            }
            let listed = try client.get("/feeds").json["groups"] as? [[String: Any]] ?? []
            #expect(listed.first?["generationId"] as? String == second)
            #expect(listed.first?["schemaVersion"] as? Int == 1)
        }
    }
}
