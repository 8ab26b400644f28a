import Foundation
import Testing

@testable import FeedServerKit

/// The long-poll and the event stream behind a cache (Varnish, nginx, a CDN): the entity tag in
/// the query for caches that drop `If-None-Match`, a whole wait under their 60 s first-byte
/// timeouts, and answers no cache keeps.
@Suite struct BehindCachesTests {
    @Test func aWaitTakesTheKnownEntityTagFromItsQuery() throws {
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let fingerprint = String(tag.dropFirst().dropLast())
            // The bare fingerprint and the ETag as sent (quotes percent-encoded) both hold the wait.
            for known in [fingerprint, "%22\(fingerprint)%22"] {
                let started = Date()
                let timedOut = try client.get("/feeds/g?wait=0.3&etag=\(known)")
                let elapsed = Date().timeIntervalSince(started)
                #expect(timedOut.status == 304 && timedOut.header("ETag") == tag, "\(known)")
                #expect(elapsed >= 0.3 && elapsed < 5, "\(known): held \(elapsed) s")
                #expect(timedOut.header("Cache-Control") == "no-store")
            }
            // A stale tag is answered at once, and the header wins over the query when both come.
            let cases: [(String, [(String, String)], Int)] = [
                ("etag=old", [], 200),
                ("etag=\(fingerprint)", [("If-None-Match", "\"old\"")], 200),
                ("etag=old", [("If-None-Match", tag)], 304),
            ]
            for (query, headers, status) in cases {
                let answer = try client.get("/feeds/g?wait=0.3&\(query)", headers: headers)
                #expect(answer.status == status, "\(query) \(headers)")
                #expect(answer.header("Cache-Control") == "no-store")
            }
            // Without `wait` the parameter changes nothing: a plain read is a 200.
            #expect(try client.get("/feeds/g?etag=\(fingerprint)").status == 200)

            // Held until a publish, which it then gets.
            let publisher = Thread {
                usleep(300_000)
                _ = try? HTTPTestClient(port: server.port).put("/feeds/g", json: "[2]")
            }
            let started = Date()
            publisher.start()
            let changed = try client.get("/feeds/g?wait=20&etag=\(fingerprint)")
            #expect(changed.status == 200 && changed.json["payload"] as? [Int] == [2])
            #expect(changed.header("Cache-Control") == "no-store")
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }

    /// The longest wait with the most jitter stays under 60 s, Varnish's default
    /// `first_byte_timeout` (and nginx's `proxy_read_timeout`).
    @Test func aWholeWaitStaysUnderSixtySeconds() throws {
        #expect(ReadParameters.maxWaitSeconds * 17 / 16 < 60)
        for text in ["55", "60", "120", "1e9"] {
            for _ in 0..<200 {
                let wait = try #require(try ReadParameters.waitSeconds(text))
                #expect(wait >= 55 && wait <= 55 * 17 / 16, "\(text): \(wait)")
            }
        }
        #expect(try ReadParameters.waitSeconds("8").map { $0 >= 8 && $0 <= 8.5 } == true)
    }

    /// A wait's answer and a stream say `no-store`; the plain read beside them keeps its `no-cache`
    /// and its prepared answer.
    @Test func waitsAndStreamsAreNoCachesToKeep() throws {
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            #expect(try client.get("/feeds/g?wait=0").header("Cache-Control") == "no-store")
            let waited = try client.get("/feeds/g?wait=0.1", headers: [("If-None-Match", tag)])
            #expect(waited.status == 304 && waited.header("Cache-Control") == "no-store")
            for _ in 0..<3 {
                #expect(try client.get("/feeds/g").header("Cache-Control") == "no-cache")
                let unchanged = try client.get("/feeds/g", headers: [("If-None-Match", tag)])
                #expect(unchanged.status == 304 && unchanged.header("Cache-Control") == "no-cache")
            }
            #expect(try client.head("/feeds/g/events").header("Cache-Control") == "no-store")
            let stream = try HTTPTestConnection(port: server.port)
            try stream.sendRaw(Array("GET /feeds/g/events HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            let opening = try stream.readUntil("event: generation").lowercased()
            #expect(opening.contains("cache-control: no-store\r\n"), "\(opening)")
        }
    }
}
