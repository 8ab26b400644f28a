import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Synchronization
import Testing

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// Hostile and edge-case input against the server: the real `feed-server` binary where a failure
/// would take the process down (a trap, an abort at shutdown), the in-process server elsewhere.
@Suite struct ServerHardeningTests {
    /// Starts the real binary on a root in `scratch` (which the caller keeps alive); the caller signals it.
    private func startBinary(
        _ scratch: ScratchDirectory, _ extra: [String] = []
    ) throws -> (ChildServer, HTTPTestClient) {
        let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path + "/data"] + extra)
        return (child, HTTPTestClient(port: try child.waitForPort()))
    }

    @Test func extremeEpochParametersAreRefusedNotFatal() throws {
        let scratch = ScratchDirectory()
        let (child, client) = try startBinary(scratch)
        #expect(try client.put("/feeds/g", json: #"{"items":[1,2,3]}"#).status == 201)
        for value in ["-9223372036854775808", "9223372036854775807", "-8640000000000001", "99999999999999999999"] {
            #expect(try client.get("/rotation?count=1&epochMs=\(value)").status == 400, "\(value)")
            #expect(try client.get("/feeds/g/timeline?items=/items&start=\(value)").status == 400, "\(value)")
        }
        // The ends of the accepted range work, with any zone.
        for value in ["-8640000000000000", "8640000000000000"] {
            #expect(try client.get("/rotation?count=7&epochMs=\(value)&zoneOffsetSeconds=-64800").status == 200)
            let timeline = try client.get(
                "/feeds/g/timeline?items=/items&start=\(value)&zoneOffsetSeconds=64800&hours=168")
            #expect(timeline.status == 200)
            #expect((timeline.json["entries"] as? [Any])?.count == 168)
        }
        #expect(try client.get("/healthz").status == 200, "still alive")
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    @Test func anExtremeIdOnDiskDoesNotCrashTheNextPublishAfterARestart() throws {
        let scratch = ScratchDirectory()
        let group = scratch.path + "/data/g"
        let id = "999999999999999999-aaaaaaaa"
        try FileManager.default.createDirectory(atPath: "\(group)/generations/\(id)", withIntermediateDirectories: true)
        let feed =
            #"{"schemaVersion":1,"generatedAtEpochMs":999999999999999999,"fingerprint":"\#(String(repeating: "a", count: 64))","payload":[0]}"#
        try Data(feed.utf8).write(to: URL(fileURLWithPath: "\(group)/generations/\(id)/feed.json"))
        try Data(#"{"current":"\#(id)"}"#.utf8).write(to: URL(fileURLWithPath: "\(group)/current.json"))
        for round in 1...2 {
            let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path + "/data"])
            let client = HTTPTestClient(port: try child.waitForPort())
            #expect(try client.put("/feeds/g", json: "[\(round)]").status == 201)
            #expect(try client.get("/feeds/g").json["payload"] as? [Int] == [round])
            child.signal(SIGTERM)
            #expect(child.waitForExit() == 0)
        }
    }

    @Test func sigtermWhileKeepAliveClientsKeepParkingExitsZero() throws {
        for _ in 0..<3 {
            let scratch = ScratchDirectory()
            let (child, client) = try startBinary(scratch, ["--shutdown-timeout", "3"])
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let answered = Atomic<Int>(0)
            var threads: [Thread] = []
            for index in 0..<6 {
                let connection = try HTTPTestConnection(port: client.port)
                let thread = Thread {
                    // Park; when answered, at once park again (or open an event stream) on the
                    // same connection, as the preview page's polling loop does during a shutdown.
                    for round in 0..<50 {
                        let path = (index + round) % 3 == 0 ? "/feeds/g/events" : "/feeds/g?wait=30"
                        guard
                            (try? connection.sendRaw(
                                Array("GET \(path) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n".utf8))) != nil,
                            let response = try? connection.readResponse()
                        else { return }
                        if round == 0 { answered.add(1, ordering: .relaxed) }
                        if response.header("Content-Type")?.hasPrefix("text/event-stream") == true { return }
                    }
                }
                threads.append(thread)
                thread.start()
            }
            // All six parked (long-polls) or streaming: each has had its first request read, so
            // each is answered by the shutdown rather than refused unread.
            try waitUntil { try client.get("/metrics").text.contains("feedserver_open_waiters 6") }
            child.signal(SIGTERM)
            #expect(child.waitForExit() == 0, "output: \(child.output.suffix(400))")
            #expect(!child.output.contains("suspended connections"))
            #expect(answered.load(ordering: .relaxed) >= 4, "parked requests are answered, not dropped")
        }
    }

    /// A client that pipelines (a long-poll and, in the same write, the next request) would get
    /// each answer at once during a shutdown and send the next, holding the shutdown until its
    /// deadline. Once shutdown begins every answer says `Connection: close` and the connection is
    /// closed, so the pipelined request is never read.
    @Test func afterSigtermAnswersCloseTheirConnection() throws {
        let scratch = ScratchDirectory()
        let (child, client) = try startBinary(scratch, ["--shutdown-timeout", "30"])
        let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
        let connection = try HTTPTestConnection(port: client.port)
        let poll = "GET /feeds/g?wait=30 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n"
        try connection.sendRaw(Array((poll + poll).utf8))
        try waitUntil { try client.get("/metrics").text.contains("feedserver_open_waiters 1") }
        child.signal(SIGTERM)
        let answer = try connection.readResponse()
        #expect(answer.status == 304)
        #expect(answer.header("Connection")?.lowercased() == "close", "headers: \(answer.text)")
        #expect(connection.isClosedByPeer(within: 5), "the pipelined request is not read")
        #expect(child.waitForExit() == 0)
    }

    /// Once shutdown begins a new request is not started: 503 `shutting-down`, closed. (Not
    /// MHD_quiesce_daemon, whose epoll race with libmicrohttpd's own loop can abort the process
    /// at shutdown.)
    @Test func afterShutdownBeginsANewRequestIsRefusedNotStarted() throws {
        try withTestServer { server, client in
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            server.daemon.stopAccepting()
            let refused = try client.get("/feeds/g")
            #expect(refused.status == 503)
            #expect(refused.header("Connection")?.lowercased() == "close")
            #expect((refused.json["type"] as? String)?.hasSuffix("shutting-down") == true)
            #expect(refused.header("Retry-After") == "1")
        }
    }

    @Test func aPayloadAtTheExactLimitIsServedAndOneByteMoreIs413() throws {
        let limit = 8192
        try withTestServer(configure: { $0.maxPayloadBytes = limit }) { server, client in
            let probe = try client.put("/feeds/probe", json: #"{"pad":""}"#)
            let feedPath = { (group: String, id: String) in
                "\(server.options.root)/\(group)/generations/\(id)/feed.json"
            }
            let overhead = try Data(
                contentsOf: URL(fileURLWithPath: feedPath("probe", probe.json["generationId"] as! String))
            ).count
            let fits = #"{"pad":""# + String(repeating: "x", count: limit - overhead) + #""}"#
            let published = try client.put("/feeds/g", json: fits)
            #expect(published.status == 201)
            let id = try #require(published.json["generationId"] as? String)
            #expect(try Data(contentsOf: URL(fileURLWithPath: feedPath("g", id))).count == limit)
            let read = try client.get("/feeds/g")
            #expect(read.status == 200)
            #expect(read.header("X-Feed-Generation") == id, "what was acknowledged is what is served")

            let tooBig = #"{"pad":""# + String(repeating: "y", count: limit - overhead + 1) + #""}"#
            let refused = try client.put("/feeds/g", json: tooBig)
            #expect(refused.status == 413)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(try client.get("/feeds/g").header("X-Feed-Generation") == id, "the previous feed is still served")
        }
    }

    @Test func aLargeLimitGovernsReadingToo() throws {
        // Past 16 MiB: the reader's limit follows --max-payload-bytes, not a fixed size of its own,
        // so a feed that is acknowledged can be read.
        let limit = 17 << 20
        try withTestServer(configure: { $0.maxPayloadBytes = limit }) { server, _ in
            // 16 MiB parsed byte by byte in a debug build under ThreadSanitizer takes over 20 s:
            // this test is about limits, so its client waits longer than the default.
            let client = HTTPTestClient(port: server.port, timeoutSeconds: 120)
            let big = #"{"pad":""# + String(repeating: "z", count: 16 << 20) + #""}"#
            let published = try client.put("/feeds/g", json: big)
            #expect(published.status == 201)
            let read = try client.get("/feeds/g")
            #expect(read.status == 200)
            #expect(read.header("X-Feed-Generation") == published.json["generationId"] as? String)
        }
    }

    @Test func theFallbackHeaderStaysSmallHoweverManyCandidatesAreSkipped() throws {
        try withTestServer(configure: {
            $0.keepPrevious = 300
            $0.graceSeconds = 3600
        }) { _, client in
            #expect(try client.put("/feeds/g", json: #"{"v":"one"}"#).status == 201)
            for round in 0..<250 {
                #expect(try client.put("/feeds/g?schemaVersion=2", json: "[\(round)]").status == 201)
            }
            let read = try client.get("/feeds/g?schemaVersion=1")
            #expect(read.status == 200, "the response is delivered")
            #expect(read.json["payload"] as? [String: String] == ["v": "one"])
            let header = try #require(read.header("X-Feed-Fallback"))
            #expect(header.utf8.count < 2048, "\(header.utf8.count) bytes")
            #expect(header.contains("more;count=247;see=\"/feeds/g/generations?schemaVersion=1\""), "\(header)")
            let missing = try client.get("/feeds/g?schemaVersion=3")
            #expect(missing.status == 404)
            #expect(((missing.json["detail"] as? String) ?? "").contains("and 248 more"))
        }
    }

    @Test func theAccessLogEscapesEveryClientField() throws {
        let scratch = ScratchDirectory()
        let (child, client) = try startBinary(scratch)
        let connection = try HTTPTestConnection(port: client.port)
        // libmicrohttpd accepts any token characters in a method; bytes it refuses get a 400 anyway.
        try connection.sendRaw(Array("G\u{1B}[31mET /feeds/x\u{7F}\u{C2}\u{9B} HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        _ = try? connection.readResponse()
        _ = try client.get("/healthz")
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        let output = child.output
        #expect(!output.utf8.contains(0x1B), "no raw ESC reaches the log")
        #expect(!output.utf8.contains(0x7F))
        #expect(!output.utf8.contains(0xC2))
    }

    @Test func theAccessLogShowsTheClientsRequestIdOrAGeneratedOne() throws {
        let scratch = ScratchDirectory()
        let (child, client) = try startBinary(scratch)
        #expect(try client.get("/healthz", headers: [("X-Request-Id", "trace-9")]).header("X-Request-Id") == "trace-9")
        #expect(try client.get("/nope").header("X-Request-Id") == nil)
        #expect(try client.get("/nope").header("X-Request-Id") == nil)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        let lines = child.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("GET /healthz 200 ") && $0.hasSuffix(" id=trace-9") })
        let generated = lines.filter { $0.hasPrefix("GET /nope 404 ") }.compactMap { $0.split(separator: " ").last }
        #expect(generated.count == 2)
        #expect(generated.allSatisfy { $0.hasPrefix("id=") && $0.count > 3 })
        #expect(Set(generated).count == 2, "each request gets its own id")
    }

    @Test func aServerWithOnlyAReadTokenRefusesAnonymousWrites() throws {
        try withTestServer(configure: { $0.readToken = "reader" }) { _, client in
            let anonymous = try client.put("/feeds/g", json: "[1]")
            #expect(anonymous.status == 401)
            #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try client.request("DELETE", "/feeds/g").status == 401)
            #expect(
                try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer reader")]).status == 201)
            #expect(try client.get("/feeds/g").status == 401)
            #expect(try client.get("/feeds/g", headers: [("Authorization", "Bearer reader")]).status == 200)
        }
        try withTestServer(configure: {
            $0.token = "writer"
            $0.readToken = "reader"
        }) { _, client in
            let withReadToken = try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer reader")])
            #expect(withReadToken.status == 401, "with a write token set, the read token does not write")
            #expect(
                try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer writer")]).status == 201)
            #expect(try client.get("/feeds/g", headers: [("Authorization", "Bearer writer")]).status == 200)
        }
    }

    @Test func publishesRacingDeletesThroughHTTPNeverAnswer500() throws {
        try withTestServer { server, client in
            let failures = Atomic<Int>(0)
            let threads = (0..<3).map { index in
                Thread {
                    for round in 0..<60 {
                        let status =
                            index == 0
                            ? (try? client.request("DELETE", "/feeds/g").status) ?? 0
                            : (try? client.put("/feeds/g", json: "[\(index),\(round)]").status) ?? 0
                        if status >= 500 || status == 0 { failures.add(1, ordering: .relaxed) }
                    }
                }
            }
            for thread in threads { thread.start() }
            try waitUntil(seconds: 60) { threads.allSatisfy(\.isFinished) }
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(try client.put("/feeds/g", json: "[\"end\"]").status == 201)
            withExtendedLifetime(server) {}
        }
    }

    @Test(arguments: ["delete", "truncate"])
    func anAssetDamagedInPlaceIsNoticedWithinASecond(_ damage: String) throws {
        try withTestServer { server, client in
            func publish(_ title: String, _ name: String) throws -> String {
                var body = MultipartBody()
                body.field("payload", #"{"title":"\#(title)","image":"\#(name)"}"#, contentType: "application/json")
                body.file("image", filename: name, try TestImages.png(width: 64, height: 64))
                let response = try client.putMultipart("/feeds/g", body)
                #expect(response.status == 201)
                return try #require(response.json["generationId"] as? String)
            }
            let first = try publish("one", "a.png")
            let second = try publish("two", "b.png")
            #expect(try client.get("/feeds/g").header("X-Feed-Generation") == second, "cached")
            let asset = "\(server.options.root)/g/generations/\(second)/assets/b.png"
            if damage == "delete" {
                try FileManager.default.removeItem(atPath: asset)
            } else {
                try FileHandle(forWritingTo: URL(fileURLWithPath: asset)).truncate(atOffset: 10)
            }
            // The first read once the asset check is due sees it (a poll's bound would measure the
            // machine's load as much as the server).
            usleep(useconds_t(FeedStore.assetProbeIntervalMs * 1000 + 100_000))
            #expect(try client.get("/feeds/g").header("X-Feed-Generation") == first, "noticed within a second")
            // What a fresh reader of the folder serves.
            #expect(FeedStore(root: server.options.root).read(group: "g").served?.id == first)
        }
    }

    @Test func aClientThatSendsItsWholeBodyBeforeReadingGetsThe413() throws {
        try withTestServer(configure: { $0.transport.maxBodyBytes = 100_000 }) { server, client in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3_000_000)
            // Declared length: the body is read and dropped, then the 413 problem arrives.
            let declared = try HTTPTestConnection(port: server.port)
                .request("PUT", "/feeds/g", headers: [("Content-Type", "application/json")], body: body)
            #expect(declared.status == 413)
            #expect(declared.json["type"] as? String == "https://feed-server.invalid/problems/body-too-large")

            // Chunked, no length: noticed while counting, then the same.
            let chunked = try HTTPTestConnection(port: server.port)
            var raw = Array(
                "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .utf8)
            for _ in 0..<30 {
                raw += Array("186a0\r\n".utf8) + [UInt8](repeating: 0x20, count: 100_000) + Array("\r\n".utf8)
            }
            raw += Array("0\r\n\r\n".utf8)
            try chunked.sendRaw(raw)
            #expect(try chunked.readResponse().status == 413)

            // Expect: 100-continue: answered before any body byte is sent.
            let waiting = try HTTPTestConnection(port: server.port)
            try waiting.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\nExpect: 100-continue\r\n\r\n"
                        .utf8))
            #expect(try waiting.readResponse().status == 413)

            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func serversStartingOnOneRootAtOnceAllStart() throws {
        let scratch = ScratchDirectory()
        for _ in 0..<3 {
            let children = try (0..<4).map { _ in
                try ChildServer(arguments: ["--port", "0", "--root", scratch.path + "/shared-root"])
            }
            for child in children {
                let port = try child.waitForPort()
                #expect(try HTTPTestClient(port: port).get("/healthz").status == 200, "\(child.output)")
            }
            for child in children { child.signal(SIGTERM) }
            for child in children { #expect(child.waitForExit() == 0) }
        }
    }

    @Test func aNumberBeyondDoubleRangeIsA400WithItsOffset() throws {
        try withTestServer { _, client in
            #expect(try client.put("/feeds/g", json: #"{"a":1}"#).status == 201)
            let refused = try client.put("/feeds/g", json: #"{"a":1,"b":-1e400}"#)
            #expect(refused.status == 400)
            #expect(refused.json["offset"] as? Int == 11)
            #expect((refused.json["reason"] as? String)?.contains("beyond the range of a double") == true)
            #expect(
                try client.get("/feeds/g").json["payload"] as? [String: Int] == ["a": 1],
                "the previous feed is still served")
            let kept = try client.put("/feeds/g", json: #"{"tiny":1e-400,"big":123456789012345678901234567890}"#)
            #expect(kept.status == 201)
            #expect(try client.get("/feeds/g").text.contains(#"{"tiny":1e-400,"big":123456789012345678901234567890}"#))
        }
    }
}
