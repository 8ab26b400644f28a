import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// End-to-end: the real server on an ephemeral port, real files under a temporary root.
@Suite struct FeedRoutesTests {
    @Test func publishReadAndDedupe() throws {
        try withTestServer { server, client in
            let created = try client.put(
                "/feeds/quotes", json: #"{ "quotes": [ {"id":"q1","text":"Carpe diem"} ], "n": 1.50 }"#)
            #expect(created.status == 201)
            #expect(created.json["result"] as? String == "published")
            let fingerprint = try #require(created.json["fingerprint"] as? String)
            let id = try #require(created.json["generationId"] as? String)
            #expect(created.header("ETag") == "\"\(fingerprint)\"")
            #expect(created.header("Location") == "/feeds/quotes")
            #expect(created.json["assetBytes"] as? Int == 0)

            let read = try client.get("/feeds/quotes")
            #expect(read.status == 200)
            #expect(read.header("Content-Type") == "application/json")
            #expect(read.header("ETag") == "\"\(fingerprint)\"")
            #expect(read.header("Cache-Control") == "no-cache")
            #expect(read.header("X-Feed-Generation") == id)
            #expect(read.header("X-Feed-Fallback") == nil)
            #expect(read.text.contains(#""payload":{"quotes":[{"id":"q1","text":"Carpe diem"}],"n":1.50}"#))
            #expect(read.json["schemaVersion"] as? Int == 1)
            #expect(read.json["generationId"] as? String == id)

            let again = try client.put("/feeds/quotes", json: #"{"quotes":[{"id":"q1","text":"Carpe diem"}],"n":1.50}"#)
            #expect(again.status == 200)
            #expect(again.json["result"] as? String == "unchanged")
            #expect(again.json["generationId"] as? String == id)
            #expect(again.header("ETag") == "\"\(fingerprint)\"")
            let generations = try FileManager.default.contentsOfDirectory(
                atPath: server.options.root + "/quotes/generations")
            #expect(generations == [id])
        }
    }

    @Test func conditionalGetAndHead() throws {
        try withTestServer { _, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1,2,3]").header("ETag"))
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", tag)]).status == 304)
            let notModified = try client.get("/feeds/g", headers: [("If-None-Match", "\"other\", W/\(tag)")])
            #expect(notModified.status == 304)
            #expect(notModified.header("ETag") == tag)
            #expect(notModified.body.isEmpty)
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", "*")]).status == 304)
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", "\"stale\"")]).status == 200)

            let get = try client.get("/feeds/g")
            let head = try client.head("/feeds/g")
            #expect(head.status == 200)
            #expect(head.header("ETag") == tag)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.body.isEmpty)
        }
    }

    /// A 304 promises no body: `Content-Length: 0` by default (OkHttp and wrk read a length there
    /// as body bytes to wait for); `--not-modified-length representation` states the 200's, as
    /// RFC 9110 §8.6 allows. Read off the wire: two pipelined revalidations and a GET on one
    /// connection, so a body wrongly sent after a 304 would be read as the next response's status line.
    @Test func aNotModifiedStatesZeroOrTheRepresentationLengthAndSendsNoBody() throws {
        for statesLength in [false, true] {
            try withTestServer(configure: {
                $0.corsOrigin = "http://localhost:3000"
                $0.transport.notModifiedStatesLength = statesLength
            }) { server, client in
                let tag = try #require(
                    try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1","text":"wire"}]}"#).header("ETag"))
                let full = try client.get("/feeds/g").body.count
                let connection = try HTTPTestConnection(port: server.port)
                let revalidate = "GET /feeds/g HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \(tag)\r\n\r\n"
                try connection.sendRaw(
                    Array((revalidate + revalidate + "GET /feeds/g HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").utf8))
                for _ in 0..<2 {
                    let notModified = try connection.readResponse()
                    #expect(notModified.status == 304)
                    let lengths = notModified.headers.filter { $0.0.lowercased() == "content-length" }.map(\.1)
                    #expect(lengths == [statesLength ? String(full) : "0"])
                    #expect(notModified.header("Transfer-Encoding") == nil)
                    #expect(notModified.header("ETag") == tag)
                    #expect(notModified.header("Access-Control-Allow-Origin") == "http://localhost:3000")
                }
                let ok = try connection.readResponse()
                #expect(ok.status == 200)
                #expect(ok.body.count == full)
                #expect(ok.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            }
        }
    }

    @Test func fallsBackWhenTheCurrentGenerationIsCorruptedOnDisk() throws {
        try withTestServer { server, client in
            let first = try client.put("/feeds/g", json: #"{"v":1}"#)
            let second = try client.put("/feeds/g", json: #"{"v":2}"#)
            let secondID = try #require(second.json["generationId"] as? String)
            #expect(try client.get("/feeds/g").json["generationId"] as? String == secondID)

            try Data("{\"schemaVersion\":1,\"gener".utf8).write(
                to: URL(fileURLWithPath: "\(server.options.root)/g/generations/\(secondID)/feed.json"))
            // Corruption in place (no pointer change) is noticed within the store's probe interval.
            usleep(useconds_t(FeedStore.occasionalProbeIntervalMs * 1000 + 20_000))
            let fallback = try client.get("/feeds/g")
            #expect(fallback.status == 200)
            #expect(fallback.json["generationId"] as? String == first.json["generationId"] as? String)
            #expect(fallback.header("ETag") == first.header("ETag"))
            let header = try #require(fallback.header("X-Feed-Fallback"))
            #expect(header.hasPrefix("\(secondID);reason=unparsable;detail=\""))

            try FileManager.default.removeItem(atPath: "\(server.options.root)/g/current.json")
            try FileManager.default.removeItem(atPath: "\(server.options.root)/g/generations/\(secondID)")
            #expect(try client.get("/feeds/g").json["generationId"] as? String == first.json["generationId"] as? String)
        }
    }

    @Test func aNotFoundNamesAnUnusablePointer() throws {
        try withTestServer { server, client in
            try FileManager.default.createDirectory(
                atPath: server.options.root + "/g", withIntermediateDirectories: true)
            try Data("{\"current\":".utf8).write(to: URL(fileURLWithPath: server.options.root + "/g/current.json"))
            let missing = try client.get("/feeds/g")
            #expect(missing.status == 404)
            let detail = try #require(missing.json["detail"] as? String)
            #expect(detail.contains("Skipped: current.json is not a valid pointer"), "\(detail)")
        }
    }

    @Test func schemaVersionFilter() throws {
        try withTestServer { _, client in
            let v1 = try client.put("/feeds/g", json: #"{"items":["a"]}"#)
            let v2 = try client.put("/feeds/g?schemaVersion=2", json: #"{"entries":[{"word":"a"}]}"#)
            #expect(v2.status == 201)
            let v2viaHeader = try client.put("/feeds/h", json: "{}", headers: [("X-Schema-Version", "2")])
            #expect(try client.get("/feeds/h").json["schemaVersion"] as? Int == 2)
            #expect(v2viaHeader.status == 201)

            let newest = try client.get("/feeds/g")
            #expect(newest.json["schemaVersion"] as? Int == 2)
            #expect(newest.header("X-Feed-Fallback") == nil)
            let old = try client.get("/feeds/g?schemaVersion=1")
            #expect(old.json["generationId"] as? String == v1.json["generationId"] as? String)
            #expect(old.header("X-Feed-Fallback")?.contains("reason=wrong-schema") == true)
            let none = try client.get("/feeds/g?schemaVersion=3")
            #expect(none.status == 404)
            #expect(none.header("Content-Type") == "application/problem+json")
            #expect((none.json["detail"] as? String)?.contains("reader wants 3") == true)
        }
    }

    @Test func errorsAreProblemDetails() throws {
        try withTestServer(configure: { $0.transport.maxBodyBytes = 1024 }) { _, client in
            _ = try client.put("/feeds/g", json: #"{"ok":true}"#)

            let invalid = try client.put("/feeds/g", json: #"{"a": [1, 2,]}"#)
            #expect(invalid.status == 400)
            #expect(invalid.header("Content-Type") == "application/problem+json")
            #expect(invalid.json["offset"] as? Int == 12)
            #expect(invalid.json["status"] as? Int == 400)
            #expect((invalid.json["type"] as? String)?.hasSuffix("/invalid-json") == true)
            #expect((invalid.json["detail"] as? String)?.contains("byte 12") == true)

            for path in [
                "/feeds/..", "/feeds/a%20b", "/feeds/%2e%2e", "/feeds/a%2Fb",
                "/feeds/\(String(repeating: "x", count: 129))",
            ] {
                let response = try client.put(path, json: "{}")
                #expect(response.status == 400, "\(path)")
                #expect((response.json["type"] as? String)?.hasSuffix("/invalid-group-name") == true, "\(path)")
            }
            #expect(try client.get("/feeds/%zz").status == 400)

            let media = try client.request(
                "PUT", "/feeds/g", headers: [("Content-Type", "text/plain")], body: Array("{}".utf8))
            #expect(media.status == 415)
            #expect(try client.request("PUT", "/feeds/g", body: Array("{}".utf8)).status == 415)
            #expect(
                try client.put("/feeds/g", json: "{}", headers: [("Content-Type", "application/json; charset=utf-8")])
                    .status == 201)

            let big = "[" + String(repeating: "1,", count: 600) + "1]"
            let tooLarge = try client.put("/feeds/g", json: big)
            #expect(tooLarge.status == 413)
            #expect((tooLarge.json["detail"] as? String)?.contains("1024") == true)

            #expect(
                try client.get("/healthz", headers: [("X-Big", String(repeating: "a", count: 20_000))]).status == 431)

            let unknown = try client.get("/nope")
            #expect(unknown.status == 404)
            #expect(unknown.header("Content-Type") == "application/problem+json")
            #expect(try client.get("/feeds/missing").status == 404)
            #expect(try client.get("/feeds/g/extra/segments").status == 404)

            let method = try client.request("POST", "/feeds/g", body: Array("{}".utf8))
            #expect(method.status == 405)
            // OPTIONS too: the pipeline answers it on every route.
            #expect(method.header("Allow") == "DELETE, GET, HEAD, PUT, OPTIONS")
            #expect(try client.request("PATCH", "/healthz").header("Allow") == "GET, HEAD, OPTIONS")

            #expect(try client.put("/feeds/g?schemaVersion=abc", json: "{}").status == 400)
            #expect(
                try client.put("/feeds/g?schemaVersion=2", json: "{}", headers: [("X-Schema-Version", "3")]).status
                    == 422)
            #expect(try client.get("/feeds/g?schemaVersion=-1").status == 400)

            // After all of that, the last good feed is still served.
            #expect(try client.get("/feeds/g").json["payload"] as? [String: Any] != nil)
        }
    }

    @Test func chunkedBodiesOverTheLimitAreRefused() throws {
        try withTestServer(configure: { $0.transport.maxBodyBytes = 64 }) { server, _ in
            let connection = try HTTPTestConnection(port: server.port)
            let chunk = String(repeating: "1,", count: 50)
            let body = "[\(chunk)1]"
            let hex = String(body.utf8.count, radix: 16)
            try connection.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(hex)\r\n\(body)\r\n0\r\n\r\n"
                        .utf8))
            #expect(try connection.readResponse().status == 413)
        }
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        try withTestServer { server, client in
            _ = try client.put("/feeds/g", json: "[1]")
            let connection = try HTTPTestConnection(port: server.port)
            for _ in 0..<5 {
                let response = try connection.request("GET", "/feeds/g")
                #expect(response.status == 200)
                #expect(response.header("Connection")?.lowercased() != "close")
            }
            #expect(
                try connection.request(
                    "PUT", "/feeds/g", headers: [("Content-Type", "application/json")], body: Array("[2]".utf8)
                ).status == 201)
            #expect(try connection.request("GET", "/healthz").status == 200)
        }
    }

    @Test func aPublishFromAnotherProcessIsSeenOnTheNextRead() throws {
        try withTestServer { server, client in
            _ = try client.put("/feeds/g", json: "[1]")
            #expect(try client.get("/feeds/g").status == 200)
            // Same root, separate store instance: the way a second process (or WidgetBridge) writes.
            let other = FeedStore(root: server.options.root)
            let result = try other.publish(group: "g", payloadJSON: Array("[2]".utf8))
            let read = try client.get("/feeds/g")
            #expect(read.json["generationId"] as? String == result.generationId)
            #expect(read.header("ETag") == "\"\(result.fingerprint)\"")
        }
    }

    @Test func servesWidgetBridgeWrittenFolders() throws {
        let scratch = ScratchDirectory()
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FeedStoreTests/Fixtures/widgetbridge-v1/two-generations").path
        try FileManager.default.createDirectory(atPath: scratch.path + "/root", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixtures, toPath: scratch.path + "/root/two-generations")
        try withTestServer(root: scratch.path + "/root") { _, client in
            let read = try client.get("/feeds/two-generations")
            #expect(read.status == 200)
            #expect(read.header("ETag") == "\"612a5f6507acc225f297364ab32f9df0e57d71533003d07427cbaba74a95c1e9\"")
            let assets = read.json["assets"] as? [[String: Any]]
            #expect(assets?.map { $0["name"] as? String } == ["q1.png", "q2.png"])
            #expect(assets?.first?["url"] as? String == "/assets/two-generations/1764453600000-612a5f65/q1.png")
        }
    }

    @Test func healthz() throws {
        try withTestServer { _, client in
            let response = try client.get("/healthz")
            #expect(response.status == 200)
            #expect(response.json["status"] as? String == "ok")
            #expect(try client.head("/healthz").status == 200)
        }
    }
}
