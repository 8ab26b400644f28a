import Foundation
import Testing

@testable import FeedServerKit

/// A request with a body is judged from its head, before any body byte is kept: route, method,
/// token, media type and declared length.
@Suite struct BodyAdmissionTests {
    /// Sends only the head with `Expect: 100-continue` and reads the answer: a refusal arrives
    /// without the client sending a single body byte.
    private func headOnly(
        _ port: UInt16, _ method: String, _ path: String, _ headers: [(String, String)], length: Int
    ) throws -> WireResponse {
        let connection = try HTTPTestConnection(port: port)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\nExpect: 100-continue\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try connection.sendRaw(Array((head + "\r\n").utf8))
        return try connection.readResponse()
    }

    @Test func refusalsComeFromTheHeadBeforeTheBody() throws {
        try withTestServer(configure: {
            $0.token = "secret"
            $0.maxPayloadBytes = 1000
        }) { server, _ in
            let json = [("Content-Type", "application/json")]
            let authorized = json + [("Authorization", "Bearer secret")]
            let cases: [(String, String, [(String, String)], Int, Int)] = [
                ("PUT", "/feeds/g", json, 50_000_000, 401),  // no token
                ("PUT", "/nowhere", authorized, 50_000_000, 404),
                ("POST", "/feeds/g", authorized, 50_000_000, 405),
                ("PUT", "/feeds/g", [("Content-Type", "text/plain"), ("Authorization", "Bearer secret")], 5000, 415),
                ("PUT", "/feeds/g", authorized, 5000, 413),  // JSON over --max-payload-bytes
                ("PUT", "/feeds/%zz", authorized, 10, 400),  // malformed path
                ("PUT", "/feeds/g?maxDimnesion=1024", authorized, 500, 400),  // a publish's parameter
                ("PUT", "/feeds/g?lint=strct", authorized, 500, 400),
                ("PUT", "/feeds/g", authorized + [("If-Match", "junk")], 500, 400),
                (
                    "PUT", "/feeds/g/archive?imgaes=pack",
                    [("Content-Type", "application/x-tar"), ("Authorization", "Bearer secret")], 50_000_000, 400
                ),
            ]
            for (method, path, headers, length, status) in cases {
                let response = try headOnly(server.port, method, path, headers, length: length)
                #expect(response.status == status, "\(method) \(path) \(headers)")
                #expect(response.header("Content-Type") == "application/problem+json")
            }
        }
    }

    @Test func aRefusedBodyIsDrainedSoAClientThatSendsFirstReadsTheAnswer() throws {
        try withTestServer(configure: { $0.token = "secret" }) { server, client in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 4_000_000)
            let refused = try HTTPTestConnection(port: server.port)
                .request("PUT", "/feeds/g", headers: [("Content-Type", "application/json")], body: body)
            #expect(refused.status == 401)
            #expect(
                try client.request(
                    "PUT", "/feeds/g", headers: [("Content-Type", "image/png"), ("Authorization", "Bearer secret")],
                    body: body
                ).status == 415)
            // The 413 for JSON comes from the feed limit, not the (larger) body limit.
            #expect(
                try client.request(
                    "PUT", "/feeds/g",
                    headers: [("Content-Type", "application/json"), ("Authorization", "Bearer secret")],
                    body: [UInt8](repeating: 0x20, count: 17 << 20)
                ).status == 413)
            let metrics = try client.get("/metrics").text
            #expect(metrics.contains("status=\"401\""), "early refusals are counted")
        }
    }

    @Test func anAcceptedHeadStillPublishes() throws {
        try withTestServer { server, client in
            let connection = try HTTPTestConnection(port: server.port)
            try connection.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
                        .utf8))
            #expect(try connection.readResponse(expectBody: false).status == 100)
            try connection.sendRaw(Array("[1]".utf8))
            #expect(try connection.readResponse().status == 201)
            #expect(try client.get("/feeds/g").json["payload"] as? [Int] == [1])
        }
    }
    /// RFC 9112 §6.3: two different `Content-Length`s, or one beside `Transfer-Encoding`, leave
    /// where the body ends to whoever reads it (libmicrohttpd takes the first; a proxy may take the
    /// other: request smuggling). Refused with a 400 problem, the connection closed, nothing
    /// published, whichever order the headers come in.
    @Test func anAmbiguousBodyLengthIsRefusedAndTheConnectionClosed() throws {
        try withTestServer { server, client in
            let heads = [
                "Content-Length: 7\r\nContent-Length: 2\r\n",
                "Content-Length: 2\r\nContent-Length: 7\r\n",
                "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: chunked\r\nContent-Length: 7\r\n",
            ]
            for framing in heads {
                let connection = try HTTPTestConnection(port: server.port)
                try connection.sendRaw(
                    Array(
                        "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(framing)\r\n{\"a\":1}"
                            .utf8))
                let answer = try connection.readResponse()
                #expect(answer.status == 400, "\(framing)")
                #expect(answer.header("Content-Type") == "application/problem+json")
                #expect(
                    (answer.json["type"] as? String)?.hasSuffix("ambiguous-message-length") == true, "\(answer.text)")
                #expect(connection.isClosedByPeer(within: 5), "the connection is closed after the answer")
            }
            #expect(try client.get("/feeds/g").status == 404, "nothing was published")
            // One Content-Length given twice with the same value is no ambiguity.
            let repeated = try HTTPTestConnection(port: server.port)
            try repeated.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
                        .utf8))
            #expect(try repeated.readResponse().status == 201)
        }
    }

    /// Framing that libmicrohttpd would read differently from a proxy, or not at all, is refused
    /// and the connection closed, nothing published: whitespace between a field name and its
    /// colon (RFC 9112 §5.1: otherwise `Content-Length : 5` is a header of another name and the
    /// body becomes the next request), a transfer coding other than chunked alone (§6.1: the
    /// request would wait for a body that cannot be delimited), and a folded framing field
    /// (libmicrohttpd 0.9.75 files `Transfer-Encoding:` + ` chunked` under the name
    /// `Transfer-Encodingchunked` and so ignores it, where a proxy that unfolds it reads chunked).
    @Test func framingAProxyCouldReadDifferentlyIsRefused() throws {
        try withTestServer { server, client in
            let cases: [(String, Int)] = [
                ("Content-Length : 7\r\n", 400),
                ("Content-Length\t: 7\r\n", 400),
                ("Transfer-Encoding: identity\r\n", 501),
                ("Transfer-Encoding: gzip, chunked\r\n", 501),
                // Two lines are one list (RFC 9110 §5.3): `chunked, gzip` is not chunked alone,
                // though libmicrohttpd reads only the first line (taken as chunked, the bytes
                // after the chunked body would be answered as a second request).
                ("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", 501),
                ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 501),
                // libmicrohttpd reads `chunked ` as no coding (and would wait for the connection's
                // end); a proxy trims it.
                ("Transfer-Encoding: chunked \r\n", 501),
                ("Transfer-Encoding: chunked\t\r\n", 501),
                ("Content-Length: 7\r\nTransfer-Encoding:\r\n chunked\r\n", 400),
                ("Transfer-Encoding:\r\n chunked\r\n", 400),
                ("Content-Length:\r\n 7\r\n", 400),
            ]
            for (framing, status) in cases {
                let connection = try HTTPTestConnection(port: server.port)
                try connection.sendRaw(
                    Array(
                        "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(framing)\r\n{\"a\":1}"
                            .utf8))
                let answer = try connection.readResponse()
                #expect(answer.status == status, "\(framing.debugDescription): \(answer.status) \(answer.text)")
                #expect(
                    connection.isClosedByPeer(within: 5),
                    "\(framing.debugDescription): the connection is closed after the answer")
            }
            #expect(try client.get("/feeds/g").status == 404, "nothing was published")
        }
    }

    /// Answers the HTTP layer gives itself, before any route (framing refusals here), are in
    /// `feedserver_http_requests_total` too, under the route `unmatched`, so no answer the server
    /// gives is missing from the counters.
    @Test func answersGivenBeforeRoutingAreCounted() throws {
        try withTestServer { server, client in
            for framing in [
                "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding: identity\r\n",
                "Transfer-Encoding: gzip\r\n",
            ] {
                let connection = try HTTPTestConnection(port: server.port)
                try connection.sendRaw(
                    Array("PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(framing)\r\n".utf8))
                _ = try connection.readResponse()
            }
            let metrics = try client.get("/metrics").text
            #expect(
                metrics.contains(#"feedserver_http_requests_total{route="unmatched",method="PUT",status="400"} 1"#),
                "\(metrics)")
            #expect(
                metrics.contains(#"feedserver_http_requests_total{route="unmatched",method="PUT",status="501"} 2"#),
                "\(metrics)")
        }
    }

    /// Every folded field is refused (RFC 9112 §5.2 allows it), and so is any name that starts
    /// with a framing field's: libmicrohttpd 0.9.75 appends a fold to the field's name, so a
    /// proxy that unfolds the line reads a different field (each of these, let through, smuggles
    /// `GET /smuggled`: a lost length, or a length built from `Content`).
    @Test func everyFoldIsRefused() throws {
        try withTestServer { server, _ in
            let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
            // The last three: libmicrohttpd appends a fold to the field's name, so a fold can
            // build `Content-Length` or `Transfer-Encoding` out of another field.
            for framing in [
                "Content-Length: 35,\r\n 35\r\n", "Content-Length: 35\r\n\t35\r\n",
                "Transfer-Encoding: gzip,\r\n chunked\r\n",
                "Content-Length-Hint: x\r\n", "Content: 35\r\n -Length\r\n", "content-len: 35\r\n\tgth\r\n",
                "Transfer: chunked\r\n -Encoding\r\n", "X-Note: a\r\n b\r\n",
            ] {
                let connection = try HTTPTestConnection(port: server.port)
                try connection.sendRaw(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\(framing)\r\n\(smuggled)".utf8))
                let answer = try connection.readResponse()
                #expect(answer.status == 400, "\(framing.debugDescription): \(answer.status) \(answer.text)")
                #expect(
                    connection.isClosedByPeer(within: 5),
                    "\(framing.debugDescription): closed, the rest never read as a request")
            }
        }
    }

    /// A `Content-Length` beyond `Int.max` (libmicrohttpd takes any 64-bit length) is judged from
    /// the head like any other: read as "no body", it would skip the route, token, media type
    /// and length checks and leave the body to be buffered.
    @Test func aLengthBeyondIntMaxIsJudgedFromTheHead() throws {
        try withTestServer(configure: { $0.token = "s3cret" }) { server, _ in
            for (length, token, status) in [("9223372036854775808", nil, 401), ("18446744073709551614", "s3cret", 413)]
                as [(String, String?, Int)]
            {
                let connection = try HTTPTestConnection(port: server.port)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                try connection.sendRaw(
                    Array(
                        "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(authorization)Expect: 100-continue\r\nContent-Length: \(length)\r\n\r\n"
                            .utf8))
                #expect(try connection.readResponse().status == status, "Content-Length \(length)")
            }
        }
    }

    /// Bodies are never kept where nothing uses them: a body sent to a route that takes none
    /// (here `GET /healthz`, open whatever the tokens) is read and dropped, and repeated
    /// `payload` parts count together against --max-payload-bytes (413 once past it) instead of
    /// each being held up to it until the handler refuses the second. Kept, each costs its size
    /// in memory (100 MB to `/healthz` raises the peak RSS from 45 to 237 MB; 12 payload parts of
    /// 10 MB from 42 to 178 MB). The first payload part is held, as a payload is, hence the
    /// allowance.
    @Test(
        .enabled(
            if: !underAddressSanitizer,
            "peak RSS means nothing under ASan: shadow memory, and freed blocks held in its quarantine"))
    func bodiesNobodyReadsCostNoMemory() throws {
        let chunk = [UInt8](repeating: 0x61, count: 1 << 20)
        let healthz = try peakGrowthKiB { port in
            let connection = try HTTPTestConnection(port: port)
            try connection.sendRaw(
                Array("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: \(48 << 20)\r\n\r\n".utf8))
            for _ in 0..<48 { try connection.sendRaw(chunk) }
            #expect(try connection.readResponse().status == 200, "answered as usual once the body is dropped")
        }
        #expect(healthz < 8 << 10, "48 MB to /healthz: peak RSS grew by \(healthz) KiB")

        let payloads = try peakGrowthKiB { port in
            let boundary = "XyZbound"
            var body: [UInt8] = []
            for _ in 0..<10 {  // held together up to --max-payload-bytes (4 MB here), as one payload is
                body += Array(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"payload\"\r\nContent-Type: application/json\r\n\r\n\""
                        .utf8)
                body += [UInt8](repeating: 0x61, count: 3_000_000) + Array("\"\r\n".utf8)
            }
            body += Array("--\(boundary)--\r\n".utf8)
            let connection = try HTTPTestConnection(port: port)
            try connection.sendRaw(
                Array(
                    "PUT /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.count)\r\n\r\n"
                        .utf8) + body)
            let refused = try connection.readResponse()
            #expect(refused.status == 413 && refused.text.contains("payload"), "\(refused.status) \(refused.text)")
        }
        #expect(payloads < 12 << 10, "ten 3 MB payload parts: peak RSS grew by \(payloads) KiB")
    }

    /// How much a fresh server's peak RSS (`VmHWM`) grows while `action` runs against it.
    private func peakGrowthKiB(_ action: (UInt16) throws -> Void) throws -> Int {
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--access-log", "off", "--max-payload-bytes", "4000000",
        ])
        let port = try child.waitForPort()
        let status = "/proc/\(child.process.processIdentifier)/status"
        func peakKiB() throws -> Int {
            let line = try #require(
                try String(contentsOfFile: status, encoding: .utf8).split(separator: "\n").first {
                    $0.hasPrefix("VmHWM:")
                })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }
        #expect(try HTTPTestClient(port: port).get("/healthz").status == 200)
        let before = try peakKiB()
        try action(port)
        return try peakKiB() - before
    }

    /// A bodyless request is not judged as a body: a `DELETE` carrying a multipart type whose
    /// boundary libmicrohttpd's post processor refuses still deletes (no 400); and a request that
    /// takes no body but declares more than is ever dropped is answered from its head, not invited
    /// (`100 Continue`), read for 64 MiB, then reset.
    @Test func bodylessRequestsAreNotJudgedAsBodies() throws {
        try withTestServer { server, client in
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            let delete = try HTTPTestConnection(port: server.port)
            try delete.sendRaw(
                Array(
                    "DELETE /feeds/g HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n\r\n".utf8)
            )
            #expect(try delete.readResponse(expectBody: false).status == 204)
            #expect(try client.get("/feeds/g").status == 404)

            let healthz = try HTTPTestConnection(port: server.port)
            try healthz.sendRaw(
                Array(
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000000\r\n\r\n".utf8
                ))
            let answer = try healthz.readResponse()
            #expect(answer.status == 413, "\(answer.status) \(answer.text)")
            #expect(healthz.isClosedByPeer(within: 5))
        }
    }
}

/// Whether this test process (and so the server binary built with it) runs under the address
/// sanitizer (scripts/sanitizers.sh): its runtime is then linked in.
let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
