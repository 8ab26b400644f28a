import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// libmicrohttpd 0.9.75 keeps each query argument in the connection's fixed memory; a few hundred
/// of them ran it out and the connection hung without an answer until the head deadline. A query
/// past the limit is refused at once with a 414 problem, and the server goes on answering.
@Suite struct QueryArgumentsTests {
    private static func query(_ count: Int) -> String {
        (0..<count).map { "a\($0)=1" }.joined(separator: "&")
    }

    @Test func aQueryWithinTheLimitIsRead() throws {
        try withTestServer { _, client in
            _ = try client.put("/feeds/g", json: "[1]")
            let answer = try client.get("/feeds/g?\(Self.query(HeadFacts.maxQueryArguments))")
            #expect(answer.status == 200)
        }
    }

    @Test(arguments: [HeadFacts.maxQueryArguments + 1, 230, 300, 800])
    func aQueryPastTheLimitIsA414AtOnce(_ count: Int) throws {
        try withTestServer { server, client in
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            let started = Date()
            let answer = try connection.request("GET", "/feeds/g?\(Self.query(count))")
            #expect(Date().timeIntervalSince(started) < 2, "answered, not left to the head deadline")
            #expect(answer.status == 414)
            #expect(answer.header("Content-Type") == "application/problem+json")
            #expect(answer.text.contains("at most \(HeadFacts.maxQueryArguments)"))
            #expect(answer.header("Connection")?.lowercased() == "close")
            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func aRequestWithABodyAndTooManyArgumentsIsRefusedAndPublishesNothing() throws {
        try withTestServer { server, client in
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            let answer = try connection.request(
                "PUT", "/feeds/g?\(Self.query(300))", headers: [("Content-Type", "application/json")],
                body: Array("[1]".utf8))
            #expect(answer.status == 414)
            #expect(try client.get("/feeds/g").status == 404)
        }
    }
}
