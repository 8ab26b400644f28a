import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `readerServes` follows WidgetBridge's Swift reader, whose `JSONDecoder` is more lenient than
/// this server's parser: for each leniency a foreign generation is made current, and the fault
/// lab's prediction is compared with what Foundation's decoder makes of the same folder
/// (`ReferenceReader`), while this server's own read stays strict and falls back.
@Suite struct FaultLabReaderRulesTests {
    /// A foreign `feed.json`, and whether WidgetBridge's reader of schema 1 takes it.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var readerTakes: Bool
        var testDescription: String { name }
    }

    static let fingerprint = String(repeating: "ab", count: 32)

    static func envelope(
        schema: String = "1", payload: String = #"{"title":"foreign"}"#, extra: String = ""
    )
        -> [UInt8]
    {
        Array(
            #"{"schemaVersion":\#(schema),"generatedAtEpochMs":1764450000000,"fingerprint":"\#(fingerprint)","#
                .utf8) + Array(#""payload":\#(payload)\#(extra)}"#.utf8)
    }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    static let cases: [Case] = [
        Case(
            name: "duplicate member in the payload", bytes: envelope(payload: #"{"title":"a","title":"b"}"#),
            readerTakes: true),
        // The decoder reads the first of duplicate members (JSONSerialization would take the last).
        Case(
            name: "duplicate schemaVersion, 1 first", bytes: envelope(extra: #","schemaVersion":2"#),
            readerTakes: true),
        Case(
            name: "duplicate schemaVersion, 2 first", bytes: envelope(schema: "2", extra: #","schemaVersion":1"#),
            readerTakes: false),
        Case(name: "byte-order mark", bytes: [0xEF, 0xBB, 0xBF] + envelope(), readerTakes: true),
        Case(
            name: "two byte-order marks", bytes: [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + envelope(), readerTakes: false),
        Case(name: "trailing comma in the envelope", bytes: envelope(extra: ","), readerTakes: true),
        Case(name: "trailing comma in the payload", bytes: envelope(payload: "[1,2,]"), readerTakes: true),
        Case(name: "1.0 as schemaVersion", bytes: envelope(schema: "1.0"), readerTakes: true),
        Case(name: "1e0 as schemaVersion", bytes: envelope(schema: "1e0"), readerTakes: true),
        Case(name: "1.5 as schemaVersion", bytes: envelope(schema: "1.5"), readerTakes: false),
        Case(name: "nesting 130 deep", bytes: envelope(payload: nested(129)), readerTakes: true),
        Case(name: "nesting 513 deep", bytes: envelope(payload: nested(512)), readerTakes: false),
    ]

    private struct Seeded {
        var directory: String
        var current: String
    }

    private func seed(_ server: Server, _ client: HTTPTestClient) throws -> Seeded {
        #expect(try client.put("/feeds/g", json: #"{"title":"first"}"#).status == 201)
        let response = try client.put("/feeds/g", json: #"{"title":"second"}"#)
        let current = try #require(response.json["generationId"] as? String)
        return Seeded(directory: server.options.root + "/g", current: current)
    }

    /// Makes `id` current (the served one kept as previous), with `feed.json` as given.
    private func install(_ id: String, _ bytes: [UInt8], in group: Seeded) throws {
        let folder = group.directory + "/generations/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/feed.json"))
        let pointer = #"{"current":"\#(id)","previous":["\#(group.current)"]}"#
        try Data(pointer.utf8).write(to: URL(fileURLWithPath: group.directory + "/current.json"))
    }

    /// A fault that leaves the pointer and every generation as they are, so its answer predicts
    /// the read of the folder as installed.
    private func predict(_ client: HTTPTestClient) throws -> WireResponse {
        let response = try client.request(
            "POST", "/feeds/g/faults", headers: [("Content-Type", "application/json")],
            body: Array(#"{"kind":"stale-tmp"}"#.utf8))
        #expect(response.status == 201, "\(response.text)")
        return response
    }

    private func foreignID(after current: String) throws -> String {
        let epochMs = try #require(Int64(current.split(separator: "-")[0]))
        return "\(epochMs + 1000)-f0f0f0f0"
    }

    @Test(arguments: cases)
    func readerServesFollowsFoundationsDecoder(_ foreign: Case) throws {
        try withTestServer(configure: { $0.faultLab = true }) { server, client in
            let group = try seed(server, client)
            let id = try foreignID(after: group.current)
            try install(id, foreign.bytes, in: group)
            // What Foundation itself decides, first on the file alone, then over the folder.
            let decoded = ReferenceReader.envelopeSchemaVersion(of: group.directory + "/generations/\(id)/feed.json")
            #expect((decoded == 1) == foreign.readerTakes, "Foundation's JSONDecoder: \(String(describing: decoded))")
            let reference = ReferenceReader.read(group: group.directory, schemaVersion: 1)
            #expect(reference.served == (foreign.readerTakes ? id : group.current))

            let response = try predict(client)
            #expect(response.json["readerServes"] as? String == reference.served)
            let skipped = (response.json["skipped"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(skipped == reference.skipped)
            // This server stays strict: none of these is served by it.
            #expect(response.json["serverServes"] as? String == group.current)
            #expect(try client.get("/feeds/g?schemaVersion=1").header("X-Feed-Generation") == group.current)
        }
    }

    @Test func theListingSkipsHiddenFoldersAsTheReaderDoes() throws {
        try withTestServer(configure: { $0.faultLab = true }) { server, client in
            let directory = server.options.root + "/h"
            let folder = directory + "/generations/.hidden-1"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(Self.envelope()).write(to: URL(fileURLWithPath: folder + "/feed.json"))
            let response = try client.request(
                "POST", "/feeds/h/faults", headers: [("Content-Type", "application/json")],
                body: Array(#"{"kind":"stale-tmp"}"#.utf8))
            #expect(response.status == 201, "\(response.text)")
            #expect(ReferenceReader.read(group: directory, schemaVersion: 1).served == nil)
            #expect(response.json["readerServes"] is NSNull, "\(response.text)")
        }
    }

    @Test func aPointerToDotDotIsFollowedToTheGroupFolderAsTheReaderDoes() throws {
        try withTestServer(configure: { $0.faultLab = true }) { server, client in
            let group = try seed(server, client)
            try Data(Self.envelope()).write(to: URL(fileURLWithPath: group.directory + "/feed.json"))
            let pointer = #"{"current":"..","previous":["\#(group.current)"]}"#
            try Data(pointer.utf8).write(to: URL(fileURLWithPath: group.directory + "/current.json"))
            let response = try predict(client)
            #expect(ReferenceReader.read(group: group.directory, schemaVersion: 1).served == "..")
            #expect(response.json["readerServes"] as? String == "..")
            // Never followed out of the generations folder here: `..` is not a safe name.
            #expect(response.json["serverServes"] as? String == group.current)
        }
    }
}
