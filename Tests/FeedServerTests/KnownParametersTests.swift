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

    @Test func everyParameterAPublishReadsIsKnown() throws {
        let query = RequestFields(
            given: KnownParameters.publish.names.map { ($0, "1") }, kind: .GET_ARGUMENT_KIND)
        try KnownParameters.publish.check(query)
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
            #expect(try client.get("/feeds/g").status == 404, "nothing was published")
            let known = try client.put("/feeds/g?maxDimension=1024&lint=strict&schemaVersion=1", json: #"{"a":1}"#)
            #expect(known.status == 201, "\(known.text)")
        }
    }
}
