import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// A publish reads a fixed set of query parameters; any other (a misspelling) is a 400 that
/// names the one likely meant, and nothing is written.
@Suite struct KnownParametersTests {
    @Test(arguments: [
        ("maxDimnesion", "maxDimension"), ("MAXDIMENSION", "maxDimension"), ("schemaversion", "schemaVersion"),
        ("lnt", "lint"), ("imgaes", "images"),
    ])
    func aMisspellingNamesTheParameterMeant(_ sent: String, _ meant: String) {
        #expect(KnownParameters.publish.likelyMeant(sent) == meant)
    }

    @Test(arguments: ["color", "x", String(repeating: "maxDimension", count: 4)])
    func aNameFarFromEveryParameterNamesNone(_ sent: String) {
        #expect(KnownParameters.publish.likelyMeant(sent) == nil)
    }

    @Test func theEditDistanceCountsInsertionsDeletionsAndSubstitutions() {
        func distance(_ a: String, _ b: String) -> Int { KnownParameters.editDistance(Array(a.utf8), Array(b.utf8)) }
        #expect(distance("lint", "lint") == 0)
        #expect(distance("", "lint") == 4)
        #expect(distance("lint", "lnt") == 1)
        #expect(distance("strict", "strcit") == 2)
    }

    /// The query parameters openapi.yaml declares for both publishes, which the check must let
    /// through: read from the operation's text (its inline `{ name: …, in: query` entries and the
    /// shared `schemaVersionQuery`).
    @Test(arguments: ["publishFeed", "restoreFeed"])
    func everyQueryParameterTheContractDeclaresIsKnown(_ operation: String) throws {
        let contract = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let start = try #require(contract.range(of: "operationId: \(operation)\n"))
        let rest = contract[start.upperBound...]
        let span = rest[..<(rest.range(of: "operationId: ")?.lowerBound ?? rest.endIndex)]
        var declared = span.components(separatedBy: "{ name: ").dropFirst().compactMap { entry -> String? in
            let fields = entry.components(separatedBy: ", ")
            return fields.count > 1 && fields[1] == "in: query" ? fields[0] : nil
        }
        if span.contains("#/components/parameters/schemaVersionQuery") { declared.append("schemaVersion") }
        #expect(declared.count >= 5, "\(declared)")
        let query = RequestFields(given: declared.map { ($0, "1") }, kind: .GET_ARGUMENT_KIND)
        #expect(throws: Never.self) { try KnownParameters.publish.check(query) }
        #expect(Set(declared) == Set(KnownParameters.publish.names), "the contract and the check list the same")
    }

    @Test func emptyNamesPassAndRepeatedNamesAreRefused() throws {
        let empty = RequestFields(given: [("", "1"), ("lint", "strict"), ("", "")], kind: .GET_ARGUMENT_KIND)
        try KnownParameters.publish.check(empty)
        let twice = RequestFields(given: [("lint", "warn"), ("lint", "strict")], kind: .GET_ARGUMENT_KIND)
        #expect(throws: Problem.self) { try KnownParameters.publish.check(twice) }
    }

    @Test func aShownNameIsBoundedInScalarsAndEscaped() {
        // One character of 5,001 scalars: a count of characters would keep it whole.
        let combining = "a" + String(repeating: "\u{301}", count: 5000)
        let detail = Problem.unknownParameter(combining, known: KnownParameters.publish.names).detail
        #expect(detail.utf8.count < 600, "\(detail.utf8.count) bytes")
        let hostile = Problem.unknownParameter("a\u{1B}[31mred\u{202E}x", known: ["lint"]).detail
        #expect(!hostile.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(hostile)")
        #expect(hostile.contains("%1B[31mred%E2%80%AEx"), "\(hostile)")
    }

    @Test func aPercentEncodedMisspellingIsMatchedDecoded() {
        #expect(KnownParameters.publish.likelyMeant("max%44imnesion") == "maxDimension")
    }

    @Test func aPublishWithAMisspeltParameterIsRefusedAndWritesNothing() throws {
        try withTestServer { _, client in
            let misspelt = try client.put("/feeds/g?maxDimnesion=1024&lint=strict", json: #"{"a":1}"#)
            #expect(misspelt.status == 400)
            #expect(misspelt.header("Content-Type") == "application/problem+json")
            let detail = misspelt.json["detail"] as? String ?? ""
            #expect(
                detail.hasPrefix("Unknown query parameter 'maxDimnesion'; did you mean 'maxDimension'?"), "\(detail)")
            let valueless = try client.put("/feeds/g?strict", json: #"{"a":1}"#)
            #expect(valueless.status == 400)
            #expect((valueless.json["detail"] as? String)?.contains("'strict' was sent without a value") == true)
            let archive = try client.request(
                "PUT", "/feeds/g/archive?imgaes=pack", headers: [("Content-Type", "application/x-tar")], body: [1])
            #expect(archive.status == 400)
            #expect((archive.json["detail"] as? String)?.contains("did you mean 'images'?") == true)
            let twice = try client.put("/feeds/g?lint=warn&lint=strict", json: #"{"a":1}"#)
            #expect((twice.json["detail"] as? String)?.contains("'lint' was sent more than once") == true)
            #expect(try client.get("/feeds/g").status == 404, "nothing was published")
            #expect(
                try client.put("/feeds/g?&lint=warn&&", json: #"{"a":0}"#).status == 201, "empty names name nothing")
            let known = try client.put("/feeds/g?maxDimension=1024&lint=strict&schemaVersion=1", json: #"{"a":1}"#)
            #expect(known.status == 201, "\(known.text)")
        }
    }
}
