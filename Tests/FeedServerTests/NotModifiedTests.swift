import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A `304` promises no body by default, so a client that reads its `Content-Length` as body
/// bytes (OkHttp's `promisesBody`, wrk's http_parser) reads it right on a keep-alive connection:
/// feeds, assets, archives, the pages' files and a long-poll that ran out alike, whether the
/// answer is routed or prepared. libmicrohttpd 0.9.75 always sends a length there, so that
/// length is 0.
@Suite struct NotModifiedTests {
    /// Publishes `g` with one image; the paths with a `304`.
    private func publish(_ client: HTTPTestClient) throws -> [String] {
        var body = MultipartBody()
        body.field("payload", #"{"quotes":[{"id":"q1","image":"q1.png"}]}"#, contentType: "application/json")
        body.file("asset0", filename: "q1.png", try TestImages.png(width: 120, height: 80))
        let published = try client.putMultipart("/feeds/g", body)
        let asset = try #require((published.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
        return ["/feeds/g", asset, "/feeds/g/archive", "/preview.js", "/"]
    }

    /// One request on `connection`, read as OkHttp reads it.
    private func get(
        _ connection: HTTPTestConnection, _ path: String, _ headers: [(String, String)] = []
    ) throws -> WireResponse {
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try connection.sendRaw(Array((head + "\r\n").utf8))
        return try connection.readResponse(lengthAfterNotModified: true)
    }

    @Test func aClientThatReadsA304sLengthKeepsItsConnectionInStep() throws {
        try withTestServer { server, client in
            let paths = try publish(client)
            // A stalled read fails in 3 s instead of hanging the suite.
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            for path in paths {
                let first = try get(connection, path)
                #expect(first.status == 200, "\(path)")
                let tag = try #require(first.header("ETag"), "\(path)")
                // Three rounds: the first answers are routed, later ones may be prepared.
                for round in 0..<3 {
                    let notModified = try get(connection, path, [("If-None-Match", tag)])
                    #expect(notModified.status == 304, "\(path) \(round)")
                    #expect(
                        notModified.headers.filter { $0.0.lowercased() == "content-length" }.map(\.1) == ["0"],
                        "\(path) \(round)")
                    #expect(notModified.header("Transfer-Encoding") == nil)
                    #expect(notModified.body.isEmpty)
                    let again = try get(connection, path)
                    #expect(again.status == 200 && again.body == first.body, "\(path) \(round)")
                }
            }
            // A long-poll whose wait ran out, and one told the entity tag in its query.
            let tag = try #require(try get(connection, "/feeds/g").header("ETag"))
            let waited = try get(connection, "/feeds/g?wait=0.2", [("If-None-Match", tag)])
            let byQuery = try get(connection, "/feeds/g?wait=0.2&etag=\(tag.dropFirst().dropLast())")
            for answer in [waited, byQuery] {
                #expect(answer.status == 304 && answer.header("Content-Length") == "0")
                #expect(answer.header("Cache-Control") == "no-store")
            }
            #expect(try get(connection, "/feeds/g").status == 200)
        }
    }

    /// What the default spares such a client: with `--not-modified-length representation` it
    /// takes the next answer's bytes for the `304`'s body.
    @Test func representationStatesTheLengthSuchAClientReadsAsABody() throws {
        try withTestServer(configure: { $0.transport.notModifiedStatesLength = true }) { server, client in
            let tag = try #require(try client.put("/feeds/g", json: #"{"text":"a longer body"}"#).header("ETag"))
            let full = try client.get("/feeds/g").body.count
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            try connection.sendRaw(
                Array(
                    ("GET /feeds/g HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n"
                        + "GET /feeds/g HTTP/1.1\r\nHost: x\r\n\r\n").utf8))
            let notModified = try connection.readResponse(lengthAfterNotModified: true)
            #expect(notModified.status == 304 && notModified.header("Content-Length") == String(full))
            #expect(notModified.text.hasPrefix("HTTP/1.1 200"), "the next answer, read as a body")
        }
    }
}
