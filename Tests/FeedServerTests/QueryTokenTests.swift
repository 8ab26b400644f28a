import CMicroHTTPD
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// The read token as an `access_token` query parameter: what `EventSource` can send. Accepted on
/// the event stream and the long-poll only, refused everywhere else, never in the access log.
@Suite struct QueryTokenTests {
    private static let reader = "rd-Q7x91-reader"
    private static let writer = "wr-K3p55-writer"

    @Test func acceptedOnlyWhereAPageFollowsAFeedAndNeverLogged() throws {
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--threads", "2",
            "--read-token", Self.reader, "--token", Self.writer,
        ])
        let client = HTTPTestClient(port: try child.waitForPort())
        #expect(
            try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer \(Self.writer)")]).status == 201
        )

        // The event stream takes the token from the query.
        let stream = try HTTPTestConnection(port: client.port)
        try stream.sendRaw(
            Array(
                "GET /feeds/g/events?access_token=\(Self.reader) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
                    .utf8))
        let opening = try stream.readUntil("event: generation")
        #expect(opening.hasPrefix("HTTP/1.1 200"))

        // So does the long-poll (no ETag sent: it answers at once).
        let polled = try client.get("/feeds/g?wait=1&access_token=\(Self.reader)")
        #expect(polled.status == 200)
        #expect(polled.text.contains(#""payload":[1]"#))

        // A wrong token in the query is a plain invalid token.
        let wrong = try client.get("/feeds/g/events?access_token=nope")
        #expect(wrong.status == 401)
        #expect(wrong.header("WWW-Authenticate")?.contains("invalid_token") == true)

        // Anywhere else, a good token in the URL is refused and the answer says where it goes.
        for path in ["/feeds/g", "/feeds/g/warnings", "/feeds/g/generations", "/feeds"] {
            let refused = try client.get("\(path)?access_token=\(Self.reader)")
            #expect(refused.status == 401, "\(path)")
            #expect(refused.header("WWW-Authenticate")?.contains("invalid_request") == true, "\(path)")
            #expect((refused.json["detail"] as? String)?.contains("Authorization: Bearer") == true, "\(path)")
            #expect(!refused.text.contains(Self.reader), "the answer does not echo the token")
        }
        let write = try client.put("/feeds/g?access_token=\(Self.writer)", json: "[2]")
        #expect(write.status == 401, "writes never take a token from the URL")
        // The header still works, and wins over a query parameter next to it.
        #expect(
            try client.get("/feeds/g/warnings?access_token=x", headers: [("Authorization", "Bearer \(Self.reader)")])
                .status == 200)

        // The page shells hold no data: they load without a token and then ask for it.
        #expect(try client.get("/preview/g").status == 200)
        #expect(try client.get("/").status == 200)

        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        let log = child.output
        #expect(log.contains("GET /feeds/g/events 200"), "the stream is logged, by its path")
        #expect(log.contains("GET /feeds/g 401"))
        #expect(!log.contains(Self.reader), "the read token never reaches the log")
        #expect(!log.contains(Self.writer), "nor the write token")
        #expect(!log.contains("access_token"))
    }

    @Test func onlyTheStreamAndTheLongPollQualify() throws {
        let request = { (method: String, query: String) in
            let pairs = query.split(separator: "&").map { pair -> (String, String) in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }
            return HTTPRequest(
                method: method, rawPath: "/feeds/g", query: RequestFields(given: pairs, kind: .GET_ARGUMENT_KIND),
                headers: RequestFields(given: [], kind: .HEADER_KIND), body: [], parts: nil)
        }
        #expect(Authorization.takesTokenInQuery(request("GET", "access_token=t"), route: "/feeds/{group}/events"))
        #expect(Authorization.takesTokenInQuery(request("GET", "wait=5&access_token=t"), route: "/feeds/{group}"))
        #expect(!Authorization.takesTokenInQuery(request("GET", "access_token=t"), route: "/feeds/{group}"))
        #expect(!Authorization.takesTokenInQuery(request("PUT", "wait=5&access_token=t"), route: "/feeds/{group}"))
        #expect(!Authorization.takesTokenInQuery(request("GET", "access_token=t"), route: "/feeds/{group}/warnings"))
    }
}
