import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// `--cors-origin`: each origin checked at start, several named one at a time (the request's own,
/// with `Vary: Origin`), and the prepared answers of cached reads never naming anyone's.
@Suite struct CORSTests {
    private static let listed = "http://a.test:3000, https://b.test"

    private func preparedCount(_ client: HTTPTestClient) throws -> Int {
        let text = try client.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("feedserver_http_prepared_answers_total ") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? -1
    }

    @Test func originsAreCheckedAndWrittenAsABrowserSendsThem() throws {
        let accepted: [(String, [String])] = [
            ("*", ["*"]),
            ("http://localhost:3000", ["http://localhost:3000"]),
            ("HTTP://LocalHost:80", ["http://localhost"]),
            ("https://a.test:443 , http://b_c.test:8080", ["https://a.test", "http://b_c.test:8080"]),
            ("http://[::1]:5173,http://127.0.0.1:5173", ["http://[::1]:5173", "http://127.0.0.1:5173"]),
            ("http://a.test,http://A.test:80", ["http://a.test"]),
        ]
        for (text, origins) in accepted {
            #expect(try CORSPolicy(parsing: text).origins == origins, "\(text)")
            guard case .run(let options) = try ServerOptions.parse(["--cors-origin", text], environment: [:]) else {
                Issue.record("\(text): no run")
                continue
            }
            #expect(options.corsOrigin == text)
        }
        let refused: [(String, String)] = [
            ("not an origin", "has no scheme"),
            ("ftp://a.test", "scheme must be http or https"),
            ("http://a.test:3000/", "no path, query or fragment (use 'http://a.test:3000')"),
            ("http://a.test/app?x#y", "no path, query or fragment"),
            ("http://user@a.test", "no user name"),
            ("http://", "has no host"),
            ("http://a..test", "not a host name"),
            ("http://bücher.test", "xn-- form"),
            ("http://a.test:0", "port must be a number from 1 to 65535"),
            ("http://a.test:99999", "port must be"),
            ("http://a.test:", "port must be"),
            ("http://[::1", "no ']'"),
            ("http://a.test,", "is empty"),
            ("*,http://a.test", "'*' allows every origin and stands alone"),
            ("http://a.test:3000,http://b.test:5173/", "(in 'http://a.test:3000,http://b.test:5173/')"),
        ]
        for (text, reason) in refused {
            #expect(throws: CORSPolicy.InvalidOrigin.self, "\(text)") { _ = try CORSPolicy(parsing: text) }
            do {
                _ = try ServerOptions.parse(["--cors-origin", text], environment: [:])
                Issue.record("\(text) was accepted")
            } catch {
                #expect("\(error)".hasPrefix("--cors-origin: "), "\(error)")
                #expect("\(error)".contains(reason), "\(text): \(error)")
            }
        }
    }

    /// As users run it: a bad origin is a usage error (exit 2), from the flag and the environment.
    @Test func aBadOriginStopsTheStartWithStatus2() throws {
        let scratch = ScratchDirectory()
        let flag = try ChildServer(arguments: ["--port", "0", "--root", scratch.path, "--cors-origin", "not an origin"])
        #expect(flag.waitForExit() == 2)
        #expect(flag.output.contains("'not an origin' is not an origin"), "\(flag.output)")
        let environment = try ChildServer(
            arguments: ["--port", "0", "--root", scratch.path],
            environment: ["FEED_SERVER_CORS_ORIGIN": "http://a:3000,http://b:5173/"])
        #expect(environment.waitForExit() == 2)
        #expect(environment.output.contains("use 'http://b:5173'"), "\(environment.output)")
    }

    @Test func aListNamesTheRequestsOwnOriginAndVariesOnIt() throws {
        try withTestServer(configure: { $0.corsOrigin = Self.listed }) { server, client in
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            let cases: [(String?, String?)] = [
                ("http://a.test:3000", "http://a.test:3000"), ("https://b.test", "https://b.test"),
                ("http://evil.test", nil), ("http://a.test:3001", nil), ("https://b.test:443", nil), (nil, nil),
            ]
            for (origin, named) in cases {
                let headers = origin.map { [("Origin", $0)] } ?? []
                for path in ["/feeds/g", "/feeds/missing", "/healthz"] {
                    let answer = try client.get(path, headers: headers)
                    #expect(answer.header("Access-Control-Allow-Origin") == named, "\(path) \(origin ?? "-")")
                    #expect(answer.headers.filter { $0.0 == "Vary" }.map(\.1) == ["Origin"], "\(path)")
                    #expect(
                        (answer.header("Access-Control-Expose-Headers") != nil) == (named != nil), "\(path)")
                }
                let preflight = try client.request(
                    "OPTIONS", "/feeds/g", headers: headers + [("Access-Control-Request-Method", "PUT")])
                #expect(preflight.status == 204)
                #expect(preflight.header("Access-Control-Allow-Origin") == named)
                #expect(preflight.header("Vary") == "Origin")
                // A write, and a refusal of the transport's own (two different lengths).
                #expect(
                    try client.put("/feeds/g", json: "[1]", headers: headers).header(
                        "Access-Control-Allow-Origin") == named)
                let connection = try HTTPTestConnection(port: server.port)
                let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
                try connection.sendRaw(
                    Array(
                        ("PUT /feeds/g HTTP/1.1\r\nHost: x\r\n\(originLine)Content-Type: application/json\r\n"
                            + "Content-Length: 3\r\nContent-Length: 4\r\n\r\n[1]").utf8))
                let refused = try connection.readResponse()
                #expect(refused.status == 400)
                #expect(refused.header("Access-Control-Allow-Origin") == named, "refusal \(origin ?? "-")")
                #expect(refused.header("Vary") == "Origin")
            }
        }
    }

    /// A prepared answer is one for every request: it names no origin, requests whose answer
    /// names theirs are routed (whichever request came first), and every other request, with an
    /// unlisted `Origin` or none, keeps the prepared answer.
    @Test func preparedAnswersNameNoOriginAndRequestsWithAListedOneAreRouted() throws {
        try withTestServer(configure: { $0.corsOrigin = Self.listed }) { _, client in
            var body = MultipartBody()
            body.field("payload", #"{"quotes":[{"id":"q1","image":"q1.png"}]}"#, contentType: "application/json")
            body.file("asset0", filename: "q1.png", try TestImages.png(width: 40, height: 30))
            let published = try client.putMultipart("/feeds/g", body)
            let asset = try #require((published.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
            for path in ["/feeds/g", asset] {
                let first = try client.get(path, headers: [("Origin", "https://b.test")])
                let tag = try #require(first.header("ETag"))
                for conditional in [[], [("If-None-Match", tag)]] {
                    // The first answers of this key go to a listed origin: they must not become
                    // the shared one.
                    for origin in ["http://a.test:3000", "https://b.test"] {
                        let named = try client.get(path, headers: conditional + [("Origin", origin)])
                        #expect(named.header("Access-Control-Allow-Origin") == origin, "\(path)")
                    }
                    _ = try client.get(path, headers: conditional)  // routed or prepared: builds it
                    let before = try preparedCount(client)
                    let plain = try client.get(path, headers: conditional)
                    let unlisted = try client.get(path, headers: conditional + [("Origin", "http://evil.test")])
                    #expect(try preparedCount(client) == before + 2, "\(path) \(conditional)")
                    for answer in [plain, unlisted] {
                        #expect(answer.status == (conditional.isEmpty ? 200 : 304))
                        #expect(answer.header("Access-Control-Allow-Origin") == nil, "\(path)")
                        #expect(answer.header("Vary") == "Origin", "\(path)")
                    }
                    let listedAgain = try client.get(path, headers: conditional + [("Origin", "https://b.test")])
                    #expect(try preparedCount(client) == before + 2, "a listed origin is routed: \(path)")
                    #expect(listedAgain.header("Access-Control-Allow-Origin") == "https://b.test")
                    #expect(listedAgain.body == plain.body)
                }
            }
        }
    }

    /// One origin (or `*`) is the same header for everyone, so every request keeps the prepared
    /// answer, a request from that origin included.
    @Test func oneOriginIsNamedOnEveryAnswerAndKeepsThePreparedAnswer() throws {
        for (given, named) in [("http://localhost:3000", "http://localhost:3000"), ("*", "*")] {
            try withTestServer(configure: { $0.corsOrigin = given }) { _, client in
                #expect(try client.put("/feeds/g", json: "[1]").status == 201)
                _ = try client.get("/feeds/g")
                let before = try preparedCount(client)
                for origin in [nil, "http://localhost:3000", "http://other.test"] {
                    let answer = try client.get("/feeds/g", headers: origin.map { [("Origin", $0)] } ?? [])
                    #expect(answer.header("Access-Control-Allow-Origin") == named)
                    #expect(answer.header("Vary") == (given == "*" ? nil : "Origin"))
                }
                #expect(try preparedCount(client) == before + 3)
            }
        }
    }
}
