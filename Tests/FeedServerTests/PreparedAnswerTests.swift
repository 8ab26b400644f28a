import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// Cached reads answered from a route's prepared answer, before the request model is built, give
/// the answer the routed read gives, byte for byte, follow every rule the pipeline applies, and
/// are taken only where they may be (`feedserver_http_prepared_answers_total` shows which way a
/// request went).
@Suite struct PreparedAnswerTests {
    private func preparedCount(_ client: HTTPTestClient) throws -> Int {
        try counter("feedserver_http_prepared_answers_total", in: client.get("/metrics").text)
    }

    private func counter(_ name: String, in text: String) -> Int {
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? -1
    }

    /// Publishes group `g` with one PNG asset; its URL.
    private func publishOneAsset(_ client: HTTPTestClient) throws -> String {
        var body = MultipartBody()
        body.field("payload", #"{"quotes":[{"id":"q1","image":"q1.png"}]}"#, contentType: "application/json")
        body.file("asset0", filename: "q1.png", try TestImages.png(width: 300, height: 200))
        let published = try client.putMultipart("/feeds/g", body)
        return try #require((published.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
    }

    /// Every header but `Date`, in order, and the body.
    private func answer(_ response: WireResponse) -> [String] {
        response.headers.filter { $0.0.lowercased() != "date" }.map { "\($0.0.lowercased()): \($0.1)" } + [
            response.text
        ]
    }

    @Test func aPreparedAnswerEqualsTheRoutedOneWithCORS() throws {
        try withTestServer(configure: { $0.corsOrigin = "http://localhost:3000" }) { _, client in
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#).status == 201)
            #expect(try preparedCount(client) == 0)
            let routed = try client.get("/feeds/g")  // the first read renders and prepares
            #expect(try preparedCount(client) == 0)
            let tag = try #require(routed.header("ETag"))
            let routed304 = try client.get("/feeds/g", headers: [("If-None-Match", tag)])
            let routedHead = try client.head("/feeds/g")
            let before = try preparedCount(client)
            let prepared = try client.get("/feeds/g")
            let prepared304 = try client.get("/feeds/g", headers: [("If-None-Match", tag)])
            let preparedHead = try client.head("/feeds/g")
            #expect(try preparedCount(client) == before + 3)
            #expect(answer(prepared) == answer(routed))
            #expect(answer(prepared304) == answer(routed304))
            #expect(answer(preparedHead) == answer(routedHead))
            #expect(prepared.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            #expect(prepared304.status == 304 && prepared304.header("Content-Length") == "0")
            #expect(preparedHead.body.isEmpty && preparedHead.header("Content-Length") == String(routed.body.count))
            let metrics = try client.get("/metrics").text
            #expect(
                metrics.contains(#"feedserver_http_requests_total{route="/feeds/{group}",method="GET",status="200"} 2"#)
            )
            #expect(
                metrics.contains(#"feedserver_http_requests_total{route="/feeds/{group}",method="GET",status="304"} 2"#)
            )
            #expect(
                metrics.contains(
                    #"feedserver_http_requests_total{route="/feeds/{group}",method="HEAD",status="200"} 2"#))
        }
    }

    /// Anything a prepared answer cannot judge from a plain path goes through the router, with the
    /// router's answer: queries, encoded or reserved names, unknown groups, request ids.
    @Test func requestsItCannotJudgeGoThroughTheRouter() throws {
        try withTestServer { _, client in
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#).status == 201)
            let plain = try client.get("/feeds/g")
            _ = try client.get("/feeds/g")
            let before = try preparedCount(client)
            #expect(before == 1)
            let encoded = try client.get("/feeds/%67")
            #expect(encoded.status == 200 && encoded.body == plain.body)
            #expect(try client.get("/feeds/g?schemaVersion=1").body == plain.body)
            #expect(try client.get("/feeds/g?access_token=x").status == 200)
            #expect(try client.get("/feeds/.feed-server-uploads").status == 400)
            #expect(try client.get("/feeds/missing").status == 404)
            #expect(try client.get("/feeds/g/").body == plain.body)
            #expect(try client.get("/feeds/g", headers: [("X-Request-Id", "r-1")]).header("X-Request-Id") == "r-1")
            #expect(try client.request("POST", "/feeds/g").status == 405)
            #expect(try preparedCount(client) == before)
        }
    }

    /// A prepared answer reads a request's fields in one pass (`CMicroHTTPD_read_head`): a repeated
    /// field counts by its first value and names match in any case, as libmicrohttpd's own
    /// lookup (the pipeline's) finds them, so both ways give the same status.
    @Test func repeatedAndCaseFoldedFieldsAreReadAsThePipelineReadsThem() throws {
        try withTestServer { server, client in
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#).status == 201)
            let tag = try #require(try client.get("/feeds/g").header("ETag"))
            // The first 304 is routed, which prepares it.
            #expect(try client.get("/feeds/g", headers: [("If-None-Match", tag)]).status == 304)
            let connection = try HTTPTestConnection(port: server.port)
            let cases: [([(String, String)], Int)] = [
                ([("If-None-Match", #""other""#), ("If-None-Match", tag)], 200),
                ([("If-None-Match", tag), ("If-None-Match", #""other""#)], 304),
                ([("if-none-match", tag)], 304),
                ([("IF-NONE-MATCH", "*")], 304),
            ]
            for (headers, status) in cases {
                let before = try preparedCount(client)
                #expect(try connection.request("GET", "/feeds/g", headers: headers).status == status, "\(headers)")
                #expect(try preparedCount(client) == before + 1, "answered before routing: \(headers)")
                // The same fields with a request id go through the router: the same status.
                let routed = try connection.request("GET", "/feeds/g", headers: headers + [("x-request-id", "r-1")])
                #expect(routed.status == status && routed.header("X-Request-Id") == "r-1", "\(headers)")
            }
            // An id that is not echoed (too long) adds nothing per request: answered before routing.
            let before = try preparedCount(client)
            let unechoed = try connection.request(
                "GET", "/feeds/g", headers: [("X-Request-Id", String(repeating: "a", count: 65))])
            #expect(unechoed.status == 200 && unechoed.header("X-Request-Id") == nil)
            #expect(try preparedCount(client) == before + 1)
        }
    }

    /// A read answered before routing keeps no state between its handler calls: the count of
    /// requests in progress goes back to zero, and the connection waits for its next head under
    /// the head deadline again (a partial head is cut like on a fresh connection).
    @Test func aConnectionAfterCachedReadsWaitsForItsNextHeadUnderTheDeadline() throws {
        try withTestServer(configure: { $0.transport.headerTimeoutSeconds = 1 }) { server, client in
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#).status == 201)
            _ = try client.get("/feeds/g")
            let before = try preparedCount(client)
            let connection = try HTTPTestConnection(port: server.port)
            for _ in 0..<3 { #expect(try connection.request("GET", "/feeds/g").status == 200) }
            #expect(try connection.request("HEAD", "/feeds/g").status == 200)
            #expect(try preparedCount(client) == before + 4)
            // Zero once the last answer's completion has run (a moment after its bytes were sent).
            try waitUntil(seconds: 2) { server.daemon.requestsInFlight == 0 }
            try connection.sendRaw(Array("GET /feeds/g HTTP/1.1\r\n".utf8))
            #expect(connection.isClosedByPeer(within: 3), "cut at the head deadline")
        }
    }

    /// With `--read-token` every read is judged by the pipeline: a read answered with the token
    /// never makes the cached answer reachable without it.
    @Test func aReadTokenServerNeverAnswersBeforeTheTokenCheck() throws {
        try withTestServer(configure: { $0.readToken = "r3ad" }) { _, client in
            let auth = [("Authorization", "Bearer r3ad")]
            #expect(try client.put("/feeds/g", json: #"{"n":1}"#, headers: auth).status == 201)
            for _ in 0..<3 { #expect(try client.get("/feeds/g", headers: auth).status == 200) }
            #expect(try client.get("/feeds/g").status == 401)
            #expect(try client.head("/feeds/g").status == 401)
            let metrics = try client.get("/metrics", headers: auth).text
            #expect(counter("feedserver_http_prepared_answers_total", in: metrics) == 0)
        }
    }

    /// A publish by another store (as by another process) is seen once the probe interval has
    /// passed (a prepared answer revalidates exactly as the pipeline does), and a fallback answered
    /// there is counted.
    @Test func anotherProcessesPublishAndFallbacksAreSeen() throws {
        try withTestServer { server, client in
            let first = try client.put("/feeds/g", json: #"{"n":1}"#)
            _ = try client.get("/feeds/g")
            #expect(try client.get("/feeds/g").header("X-Feed-Generation") == first.json["generationId"] as? String)
            let other = FeedStore(root: server.options.root)
            let second = try other.publish(group: "g", payloadJSON: Array(#"{"n":2}"#.utf8)).generationId
            // Another process's write is seen by reads that start the probe interval after it.
            usleep(useconds_t(FeedStore.defaultProbeIntervalNanos / 1000 * 2))
            let read = try client.get("/feeds/g")
            #expect(read.header("X-Feed-Generation") == second)
            _ = try client.get("/feeds/g")
            #expect(try preparedCount(client) >= 1)
            // Removed in place, with no pointer change: noticed within the store's probe interval.
            try FileManager.default.removeItem(atPath: "\(server.options.root)/g/generations/\(second)")
            usleep(useconds_t(FeedStore.occasionalProbeIntervalMs * 1000 + 100_000))
            let fellBack = try client.get("/feeds/g").header("X-Feed-Generation")
            #expect(fellBack == first.json["generationId"] as? String, "the first read once the check is due")
            _ = try client.get("/feeds/g")
            let metricsBefore = try client.get("/metrics").text
            for _ in 0..<2 {
                let fallback = try client.get("/feeds/g")
                #expect(fallback.header("X-Feed-Generation") == first.json["generationId"] as? String)
                #expect(fallback.header("X-Feed-Fallback") != nil)
            }
            let metrics = try client.get("/metrics").text
            for name in ["feedserver_http_prepared_answers_total", "feedserver_fallbacks_served_total"] {
                #expect(counter(name, in: metrics) == counter(name, in: metricsBefore) + 2, "\(name)")
            }
        }
    }

    /// Assets: the cached `200` and `304` come from prepared answers, equal to the routed ones.
    @Test func cachedAssetsAreAnsweredBeforeRouting() throws {
        try withTestServer { _, client in
            let url = try publishOneAsset(client)
            let routed = try client.get(url)
            let tag = try #require(routed.header("ETag"))
            let routed304 = try client.get(url, headers: [("If-None-Match", tag)])
            let before = try preparedCount(client)
            let prepared = try client.get(url)
            let prepared304 = try client.get(url, headers: [("If-None-Match", tag)])
            #expect(try preparedCount(client) == before + 2)
            #expect(answer(prepared) == answer(routed) && prepared.body == routed.body)
            #expect(answer(prepared304) == answer(routed304))
        }
    }

    /// What this server does itself is seen by the next read, assets included: after our own
    /// `DELETE` with no grace period a cached asset is a 404 at once, not served from the open
    /// file for up to the asset probe's second (with one, it is served from the deleted area).
    @Test func ourOwnDeleteIsSeenByTheNextAssetRead() throws {
        try withTestServer(configure: { $0.graceSeconds = 0 }) { _, client in
            let url = try publishOneAsset(client)
            for _ in 0..<3 { #expect(try client.get(url).status == 200) }
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            #expect(try client.get(url).status == 404)
            #expect(try client.get("/feeds/g").status == 404)
        }
    }

    /// A publish may drop the cache entry between the prepared answer's lookup and the queueing
    /// of its answer: the answer must keep its `MHD_Response` alive until then (with the raw
    /// handle only, the entry's last release would destroy the response first and libmicrohttpd
    /// would abort on its freed mutex).
    @Test func anAnswerKeepsItsResponseAliveWhenTheCacheDropsIt() throws {
        let scratch = ScratchDirectory()
        let store = FeedStore(root: scratch.path + "/data")
        _ = try store.publish(group: "g", payloadJSON: Array(#"{"n":1}"#.utf8))
        let cache = FeedResponseCache(store: store)
        let key = FeedResponseCache.Key(group: "g", schemaVersion: nil)
        var entry =
            cache.current(key)
            ?? {
                if case .feed(let rendered) = cache.lookup(key) { return rendered }
                return nil
            }()
        weak let prepared = entry?.okPrepared
        // As the first routed read builds it.
        if let entry { _ = entry.okPrepared.handle(for: entry.ok, statesLength: true) }
        let metrics = Metrics()
        let feeds = FeedRoutes(
            store: store, cache: cache, encoder: try VipsImageEncoder(maxPixels: 1_000_000), imagingThreads: 1,
            metrics: metrics, waiters: try Waiters(cache: cache, metrics: metrics), maxBodyBytes: 1 << 20,
            lint: FeedLint(androidScreen: PlatformLimits.defaultAndroidScreen))
        let router = Router(routes: feeds.routes)
        var answer: PreparedAnswer? = "GET".withCString { method in
            "/feeds/g".withCString { path in
                router.preparedAnswer(RequestHead(method: method, path: path, ifNoneMatch: nil, hasQuery: false))?
                    .answer
            }
        }
        #expect(answer?.status == 200 && answer?.handle == prepared?.existingHandle)
        // A publish, and the next lookup renders a new entry: the old one leaves the cache.
        _ = try store.publish(group: "g", payloadJSON: Array(#"{"n":2}"#.utf8))
        _ = cache.lookup(key)
        entry = nil
        #expect(prepared != nil, "the answer still owns its response")
        answer = nil
        #expect(prepared == nil, "and nothing else does")
    }
}
