import FeedStore
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// Request bodies held in memory are bounded together (`--max-memory-body-bytes`), counted as
/// their bytes arrive (three times: the bytes, their parsed form, the feed written), and given back when their request
/// ends.
@Suite struct MemoryBudgetTests {
    /// A budget of 450 KB: the 200 KB asked for is raised to what one 150 KB body costs.
    private static func configure(_ options: inout ServerOptions) {
        options.transport.maxMemoryBodyBytes = 200_000
        options.maxPayloadBytes = 150_000
    }

    private static func jsonHead(_ group: String, length: Int) -> [UInt8] {
        Array(
            "PUT /feeds/\(group) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
                .utf8)
    }

    /// A JSON array of about `count` bytes.
    private static func array(bytes count: Int) -> [UInt8] {
        Array(("[" + String(repeating: "1,", count: max(0, count / 2 - 1)) + "1]").utf8)
    }

    /// A JSON publish of about `bytes` bytes to group `h`.
    private static func publish(_ client: HTTPTestClient, bytes: Int) throws -> WireResponse {
        try client.request(
            "PUT", "/feeds/h", headers: [("Content-Type", "application/json")], body: array(bytes: bytes))
    }

    /// Waits until the bytes of the budget counted now (`feedserver_memory_budget_bytes`) satisfy
    /// `condition`: a holder's body has arrived, or an answered request has given its bytes back
    /// (that happens after its answer is sent, so the client may be quicker). Under load a sleep
    /// is not enough, and a probe publish would compete with the holder for the budget.
    private static func waitUntilCounted(_ client: HTTPTestClient, _ condition: @escaping (Int) -> Bool) throws {
        try waitUntil {
            let line = try client.get("/metrics").text.split(separator: "\n").first {
                $0.hasPrefix("feedserver_memory_budget_bytes ")
            }
            return (line?.split(separator: " ").last).flatMap { Int($0) }.map(condition) ?? false
        }
    }

    /// Waits until `bytes` or more are counted.
    private static func waitUntilCounted(_ bytes: Int, _ client: HTTPTestClient) throws {
        try waitUntilCounted(client) { $0 >= bytes }
    }

    /// A connection whose JSON publish has sent `bytes` of a 150 KB body and stops there, once
    /// the server counts them (three bytes each, beside what `others` already hold).
    private static func holder(
        sending bytes: Int, _ server: Server, _ client: HTTPTestClient, beside others: Int = 0
    ) throws -> HTTPTestConnection {
        let connection = try HTTPTestConnection(port: server.port)
        try connection.sendRaw(
            jsonHead("held", length: 150_000) + Array(repeating: UInt8(ascii: " "), count: bytes))
        try waitUntilCounted(others + bytes * 3, client)
        return connection
    }

    @Test func bodiesHeldInMemoryAreBoundedTogetherAndGivenBack() throws {
        try withTestServer(configure: Self.configure) { server, client in
            // One publish holds 420 KB of the 450 KB budget (140 KB sent), its body not yet complete.
            let holder = try Self.holder(sending: 140_000, server, client)
            let refused = try Self.publish(client, bytes: 100_000)
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") != nil)
            #expect(refused.text.contains("--max-memory-body-bytes"), "\(refused.text)")
            #expect(refused.text.contains("each body byte counts 3 times"), "the limit is not of body bytes alone")
            #expect(try client.get("/feeds/h").status == 404, "nothing published")
            // Small bodies still fit beside it.
            #expect(try client.put("/feeds/small", json: "[1]").status == 201)
            // A multipart payload part counts too.
            var form = MultipartBody()
            form.field(
                "payload", String(decoding: Self.array(bytes: 100_000), as: UTF8.self), contentType: "application/json")
            #expect(try client.putMultipart("/feeds/m", form).status == 503)
            // The holder goes away: what it held is given back.
            holder.shutDown()
            try waitUntil {
                try Self.publish(client, bytes: 100_000).status == 201
            }
            try Self.waitUntilCounted(client) { $0 == 0 }
            #expect(try client.putMultipart("/feeds/m", form).status == 201)
        }
    }

    @Test func aDeclaredLengthCostsNothingUntilItsBytesArrive() throws {
        try withTestServer(configure: Self.configure) { server, client in
            // Two clients declare 150 KB each (900 KB against a 450 KB budget) and send one byte.
            let tricklers = try (0..<2).map { _ in try HTTPTestConnection(port: server.port) }
            for (index, connection) in tricklers.enumerated() {
                try connection.sendRaw(Self.jsonHead("t\(index)", length: 150_000) + Array("[".utf8))
            }
            usleep(200_000)
            // Text, whose parse costs no more than its bytes counted on arrival (300 KB).
            let text = Array(("[\"" + String(repeating: "x", count: 100_000) + "\"]").utf8)
            let published = try client.request(
                "PUT", "/feeds/h", headers: [("Content-Type", "application/json")], body: text)
            #expect(published.status == 201, "\(published.text)")
            withExtendedLifetime(tricklers) {}
        }
    }

    /// A multipart publish refused for the budget gives back what its payload part held at once,
    /// not when its connection ends: a refused client that stays connected holds nothing.
    @Test func aRefusedMultipartBodyGivesItsMemoryBackAtOnce() throws {
        try withTestServer(configure: Self.configure) { server, client in
            let holder = try Self.holder(sending: 140_000, server, client)
            // A multipart payload part of 100 KB: 10 KB fit, the rest is refused; the client stays.
            let boundary = "refusedboundary"
            let head =
                "PUT /feeds/m HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\n"
                + "Content-Length: 200000\r\n\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"payload\"\r\n"
                + "Content-Type: application/json\r\n\r\n"
            let refused = try HTTPTestConnection(port: server.port)
            try refused.sendRaw(Array(head.utf8) + Self.array(bytes: 100_000))
            // Nothing outside tells when the part was refused (its answer waits for the rest of the
            // body): a second, so that under load it is refused while the holder is still there.
            sleep(1)
            holder.shutDown()  // gives back its 140 KB
            // 145 KB (435 KB of budget) fits only if what the refused part held went back too.
            try waitUntil {
                try Self.publish(client, bytes: 145_000).status == 201
            }
            withExtendedLifetime(refused) {}
        }
    }

    /// The budget in force always lets one body of the largest accepted size in, alone.
    @Test func theBudgetFitsOneLargestBody() {
        var settings = TransportSettings()
        settings.maxMemoryBodyBytes = 200_000
        settings.maxMemoryPartBytes = 150_000
        #expect(settings.effectiveMemoryBodyBytes == 450_000)
        settings.maxMemoryBodyBytes = 500_000
        #expect(settings.effectiveMemoryBodyBytes == 500_000)
        settings.maxMemoryPartBytes = .max
        #expect(settings.effectiveMemoryBodyBytes == .max, "no overflow")
    }

    /// The transport counts a body kept in memory at the estimate's rate per byte as it arrives,
    /// so a publish adds only what its values cost.
    @Test func theTransportCountsBytesAtTheEstimatesRate() {
        #expect(JSONMemoryEstimate.bytesPerByte == TransportSettings.memoryCostPerBodyByte)
    }

    /// `[[0],[0],…]` of about `bytes` bytes: JSON whose values, not its bytes, make its parse.
    private static func dense(bytes count: Int) -> [UInt8] {
        Array(("[" + String(repeating: "[0],", count: max(0, count / 4 - 1)) + "[0]]").utf8)
    }

    /// A publish of value-dense JSON counts what its parse holds beyond its bytes: refused while
    /// another body holds much of the budget, published (nearly) alone however much it needs.
    @Test func valueDenseJSONCountsItsParseAndGoesAheadAlone() throws {
        try withTestServer(configure: Self.configure) { server, client in
            let dense = Self.dense(bytes: 140_000)
            #expect(JSONMemoryEstimate.peakBytes(of: dense) > 450_000, "more than the whole budget")
            let alone = try client.request(
                "PUT", "/feeds/alone", headers: [("Content-Type", "application/json")], body: dense)
            #expect(alone.status == 201, "\(alone.text)")
            try Self.waitUntilCounted(client) { $0 == 0 }
            // Beside a slow client's few bytes (under an eighth of the budget) too.
            let trickler = try Self.holder(sending: 5_000, server, client)
            let beside = try client.request(
                "PUT", "/feeds/beside", headers: [("Content-Type", "application/json")], body: dense)
            #expect(beside.status == 201, "\(beside.text)")
            try Self.waitUntilCounted(client) { $0 == 15_000 }
            // A holder of 60 KB (180 KB counted): the dense body's 240 KB fit on arrival, its parse does not.
            let holder = try Self.holder(sending: 60_000, server, client, beside: 15_000)
            let refused = try client.request(
                "PUT", "/feeds/crowded", headers: [("Content-Type", "application/json")],
                body: Self.dense(bytes: 80_000))
            #expect(refused.status == 503, "\(refused.text)")
            #expect(try client.get("/feeds/crowded").status == 404, "nothing published")
            withExtendedLifetime((holder, trickler)) {}
        }
    }

    /// An archive's payload is read from the spooled tar, not kept as a body, and is counted
    /// before it is parsed: eight restores at once cannot each hold a parse outside the budget.
    @Test func anArchiveRestoreCountsItsPayloadsParse() throws {
        try withTestServer(configure: Self.configure) { server, client in
            #expect(
                try client.put("/feeds/source", json: String(decoding: Self.array(bytes: 100_000), as: UTF8.self))
                    .status == 201)
            let tar = try client.get("/feeds/source/archive").body
            let holder = try Self.holder(sending: 140_000, server, client)
            let restore = { () throws -> WireResponse in
                try client.request(
                    "PUT", "/feeds/copy/archive", headers: [("Content-Type", "application/x-tar")], body: tar)
            }
            let refused = try restore()
            #expect(refused.status == 503, "\(refused.text)")
            #expect(refused.text.contains("--max-memory-body-bytes"), "\(refused.text)")
            #expect(try client.get("/feeds/copy").status == 404, "nothing published")
            holder.shutDown()
            try waitUntil { try restore().status == 201 }
        }
    }
}
