import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `GET /feeds/{group}/events` (Server-Sent Events) against the live server.
@Suite struct EventStreamTests {
    private func open(_ port: UInt16, lastEventID: String? = nil) throws -> HTTPTestConnection {
        let connection = try HTTPTestConnection(port: port)
        var head = "GET /feeds/g/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        try connection.sendRaw(Array((head + "\r\n").utf8))
        return connection
    }

    @Test func sendsTheCurrentGenerationThenOneEventPerChange() throws {
        try withTestServer { server, client in
            let first = try client.put("/feeds/g", json: "[1]")
            let firstFingerprint = try #require(first.json["fingerprint"] as? String)
            let stream = try open(server.port)
            let opening = try stream.readUntil("id: \(firstFingerprint)")
            #expect(opening.contains("Content-Type: text/event-stream"))
            #expect(opening.contains("event: generation"))
            let second = try client.put("/feeds/g", json: "[2]")
            let secondFingerprint = try #require(second.json["fingerprint"] as? String)
            let text = try stream.readUntil("id: \(secondFingerprint)")
            let id = try #require(second.json["generationId"] as? String)
            #expect(text.contains(#"data: {"generationId":"\#(id)","fingerprint":"\#(secondFingerprint)""#))
            _ = try client.put("/feeds/g", json: "[2]")  // unchanged: no event
            #expect(try client.get("/metrics").text.contains("feedserver_open_waiters 1"))
        }
    }

    @Test func aStreamOnAFeedTheCacheCannotKeepReadsItOnlyWhenItChanges() throws {
        // No render is kept: before, the watcher read the whole group again on every 100 ms tick.
        try withTestServer(configure: { $0.readCacheBytes = 0 }) { server, client in
            let first = try #require(try client.put("/feeds/g", json: "[1]").json["fingerprint"] as? String)
            let stream = try open(server.port)
            _ = try stream.readUntil("id: \(first)")
            let before = server.cache.groupReads.load(ordering: .relaxed)
            Thread.sleep(forTimeInterval: 1.5)
            #expect(server.cache.groupReads.load(ordering: .relaxed) - before <= 1, "fifteen ticks, no change")
            let other = try FeedStore(root: server.options.root).publish(group: "g", payloadJSON: Array("[3]".utf8))
            _ = try stream.readUntil("id: \(other.fingerprint)")
        }
    }

    @Test func aGenerationDamagedInPlaceIsStreamedAsTheFallback() throws {
        try withTestServer { server, client in
            let first = try client.put("/feeds/g", json: "[1]")
            let second = try client.put("/feeds/g", json: "[2]")
            let stream = try open(server.port)
            _ = try stream.readUntil("id: \(try #require(second.json["fingerprint"] as? String))")
            let id = try #require(second.json["generationId"] as? String)
            // Another process damages the served feed.json without moving the pointer.
            let path = server.options.root + "/g/generations/\(id)/feed.json"
            try Data(#"{"schemaVersion":1,"gener"#.utf8).write(to: URL(fileURLWithPath: path))
            _ = try stream.readUntil("id: \(try #require(first.json["fingerprint"] as? String))")
        }
    }

    @Test func lastEventIDSkipsWhatTheClientAlreadyHas() throws {
        try withTestServer { server, client in
            let fingerprint = try #require(try client.put("/feeds/g", json: "[1]").json["fingerprint"] as? String)
            let caughtUp = try open(server.port, lastEventID: fingerprint)
            let stale = try open(server.port, lastEventID: "0000")
            #expect(try stale.readUntil("id: \(fingerprint)").contains("event: generation"))
            let next = try #require(try client.put("/feeds/g", json: "[2]").json["fingerprint"] as? String)
            let text = try caughtUp.readUntil("id: \(next)")
            #expect(!text.contains("id: \(fingerprint)"), "the generation it already had is not sent again")
        }
    }

    @Test func aPublishFromAnotherProcessIsStreamedAndShutdownEndsStreamsCleanly() throws {
        // The body shuts the server down itself; the helper's own shutdown is then a no-op.
        try withTestServer { server, client in
            _ = try client.put("/feeds/g", json: "[1]")
            let stream = try open(server.port)
            _ = try stream.readUntil("event: generation")
            let other = try FeedStore(root: server.options.root).publish(group: "g", payloadJSON: Array("[3]".utf8))
            _ = try stream.readUntil("id: \(other.fingerprint)")
            server.shutdown(timeoutSeconds: 5)
            let rest = try stream.readToEnd()
            #expect(rest.hasSuffix("0\r\n\r\n"), "the chunked stream ends with its last chunk")
        }
    }

    @Test func aDeleteIsToldOnceAndTheNextPublishIsSentAgain() throws {
        try withTestServer { server, client in
            let first = try #require(try client.put("/feeds/g", json: "[1]").json["fingerprint"] as? String)
            let stream = try open(server.port)
            _ = try stream.readUntil("id: \(first)")
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            _ = try stream.readUntil("event: gone\ndata: {}")
            // The same content again: a new generation with the fingerprint the stream had seen.
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            let text = try stream.readUntil("event: generation\ndata: {\"generationId\"", occurrence: 2)
            #expect(text.components(separatedBy: "event: gone").count == 2, "told once")
        }
    }
}
