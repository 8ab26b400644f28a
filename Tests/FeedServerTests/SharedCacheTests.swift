import FeedImagingTesting
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// `Cache-Control` as a cache in front of the server (a proxy, a CDN) reads it. A shared cache
/// may store the answer to a request with `Authorization` when it says `public` (RFC 9111 §3.5)
/// and then give it to anyone, token or not; `private` keeps it to the client's own cache. So
/// with a read token every read answer says `private`, and so does any answer to a request with
/// the token in its URL (RFC 6750 §2.3), which no `Authorization` header marks as credentialed.
@Suite struct SharedCacheTests {
    private static let reader = "rd-cache-4Wz8"
    private static let writer = "wr-cache-9Jd2"
    private static let image = try! TestImages.png(width: 64, height: 48)

    private func publishWithAsset(_ client: HTTPTestClient, headers: [(String, String)] = []) throws -> String {
        var body = MultipartBody()
        body.field("payload", #"{"items":[{"title":"One","image":"a.png"}]}"#, contentType: "application/json")
        body.file("asset", filename: "a.png", Self.image)
        let published = try client.request(
            "PUT", "/feeds/g", headers: [("Content-Type", body.contentType)] + headers, body: body.finished)
        #expect(published.status == 201)
        return try #require((published.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
    }

    /// Its `Cache-Control`'s directives, lowercased.
    private func directives(_ value: String?) -> [String] {
        (value ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func withAReadTokenEveryReadAnswerIsPrivate() throws {
        try withTestServer(configure: {
            $0.readToken = Self.reader
            $0.token = Self.writer
        }) { server, client in
            let asset = try publishWithAsset(client, headers: [("Authorization", "Bearer " + Self.writer)])
            let auth = [("Authorization", "Bearer " + Self.reader)]
            let feed = try client.get("/feeds/g", headers: auth)
            let archive = try client.get("/feeds/g/archive", headers: auth)
            let image = try client.get(asset, headers: auth)
            let tagged = { (response: WireResponse) in auth + [("If-None-Match", response.header("ETag") ?? "")] }
            var answers: [(String, WireResponse)] = [
                ("feed 200", feed), ("feed 200 again", try client.get("/feeds/g", headers: auth)),
                ("feed 304", try client.get("/feeds/g", headers: tagged(feed))),
                ("feed HEAD", try client.head("/feeds/g", headers: auth)),
                ("feed by schema", try client.get("/feeds/g?schemaVersion=1", headers: auth)),
                ("archive 200", archive), ("archive 304", try client.get("/feeds/g/archive", headers: tagged(archive))),
                ("asset 200", image), ("asset 200 again", try client.get(asset, headers: auth)),
                ("asset 304", try client.get(asset, headers: tagged(image))),
            ]
            for path in ["/feeds", "/feeds/g/generations", "/feeds/g/warnings", "/feeds/g/timeline?items=/items"] {
                answers.append((path, try client.get(path, headers: auth)))
            }
            for (name, answer) in answers {
                #expect([200, 304].contains(answer.status), "\(name): \(answer.status)")
                let said = directives(answer.header("Cache-Control"))
                // no-store (the timeline, computed per request) is stricter still.
                #expect(
                    (said.contains("private") || said.contains("no-store")) && !said.contains("public"),
                    "\(name): \(said)")
            }
            // Only who may keep them changes: the feed is still revalidated, the asset still immutable.
            #expect(feed.header("Cache-Control") == "private, no-cache")
            #expect(image.header("Cache-Control") == "private, max-age=31536000, immutable")
            #expect(archive.header("Cache-Control") == "private, no-cache")

            let stream = try HTTPTestConnection(port: server.port)
            try stream.sendRaw(
                Array("GET /feeds/g/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.reader)\r\n\r\n".utf8))
            let opening = try stream.readUntil("event: generation").lowercased()
            #expect(opening.contains("cache-control: no-store\r\n"), "\(opening)")

            // The pages, their files and the health check need no token and are the same for
            // anyone: a shared cache may keep them.
            for path in ["/", "/preview/g", "/preview.js", "/healthz"] {
                #expect(try !directives(client.get(path).header("Cache-Control")).contains("private"), "\(path)")
            }
        }
    }

    @Test func withoutAReadTokenAssetsArePublicAndFeedsSayNoCache() throws {
        try withTestServer { _, client in
            let asset = try publishWithAsset(client)
            for _ in 0..<3 {  // the first answers are routed, the later ones prepared
                #expect(try client.get(asset).header("Cache-Control") == "public, max-age=31536000, immutable")
                #expect(try client.get("/feeds/g").header("Cache-Control") == "no-cache")
            }
        }
    }

    /// A token in the URL makes the answer private, on a server without a read token too (only
    /// `--token`, or none: reads are open and the parameter is ignored, yet it is in the URL the
    /// cache keys on). The plain reads' shared prepared answers must not take that `private`
    /// over, nor give it away: the first answer of a group here is one with the token.
    @Test func aTokenInTheURLMakesThatAnswerPrivateAndOnlyThatOne() throws {
        for token in [Self.writer, nil] {
            try withTestServer(configure: { $0.token = token }) { server, client in
                _ = try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer " + Self.writer)])
                // A wait's answer is no cache's to keep at all (`no-store`), which is private too.
                let polled = try client.get("/feeds/g?wait=1&access_token=\(Self.reader)")
                #expect(polled.status == 200 && polled.header("Cache-Control") == "no-store")
                let tag = polled.header("ETag") ?? ""
                for _ in 0..<3 {
                    #expect(try client.get("/feeds/g").header("Cache-Control") == "no-cache")
                    let unchanged = try client.get("/feeds/g", headers: [("If-None-Match", tag)])
                    #expect(unchanged.status == 304 && unchanged.header("Cache-Control") == "no-cache")
                }
                // And after the prepared answers are built, the token's answers still say private.
                let again = try client.get("/feeds/g?access_token=x&wait=1")
                #expect(again.header("Cache-Control") == "no-store")
                let timedOut = try client.get("/feeds/g?wait=0.2&access_token=x", headers: [("If-None-Match", tag)])
                #expect(timedOut.status == 304 && timedOut.header("Cache-Control") == "no-store")

                let stream = try HTTPTestConnection(port: server.port)
                try stream.sendRaw(Array("GET /feeds/g/events?access_token=x HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                let opening = try stream.readUntil("event: generation").lowercased()
                #expect(opening.contains("cache-control: no-store\r\n"), "\(opening)")
            }
        }
    }

    @Test func makingAnAnswerPrivateKeepsItsOtherDirectives() {
        let cases: [(String?, String)] = [
            ("public, max-age=31536000, immutable", "private, max-age=31536000, immutable"),
            ("no-cache", "private, no-cache"), (nil, "private"), ("private, no-cache", "private, no-cache"),
            ("no-store", "no-store"),
        ]
        for (before, after) in cases {
            var response = HTTPResponse(status: 200, headers: before.map { [("Cache-Control", $0)] } ?? [])
            response.prepared = PreparedResponse()
            ReadCaching.makePrivate(&response)
            #expect(response.header("Cache-Control") == after, "\(before ?? "none")")
            // A rewritten answer is built for its own request, never from the shared handle.
            #expect((response.prepared == nil) == (before != after), "\(before ?? "none")")
        }
    }
}
