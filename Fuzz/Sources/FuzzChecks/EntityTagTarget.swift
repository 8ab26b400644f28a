import FeedStore
import HTTPTransport

@testable import FeedServerKit

/// `If-Match` / `If-None-Match` lists. The input is one header value, or two separated by a NUL
/// byte (If-Match, then If-None-Match) for the write precondition.
enum EntityTagTarget {
    static let target = FuzzTarget(
        name: "etags",
        summary: "Conditional.parseTagList / ifNoneMatch / writePrecondition: a parsed list written back parses to "
            + "the same list; the byte-level If-None-Match matcher agrees with the full parser for every tag the "
            + "server can send; write preconditions keep exactly the strong tags, take If-None-Match only as '*', "
            + "and answer a malformed header with a 400 problem.",
        check: check)

    /// The characters of tags the server sends (hex fingerprints, SHA-256 hashes).
    private static let serverTagCharacters = Set("0123456789abcdefABCDEF".unicodeScalars)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let fields = input.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let header = fields[0]
        let members = Conditional.parseTagList(header)
        if let members {
            let written = members.map(write).joined(separator: ", ")
            try expect(
                Conditional.parseTagList(written) == members, "a parsed tag list written back parses to the same list",
                observed: "\(shown(written)) from \(shown(header))")
            var candidates = ["0123abcd"]
            for case .strong(let tag) in members { candidates.append(tag) }
            for case .weak(let tag) in members { candidates.append(tag) }
            for tag in candidates where !tag.isEmpty && tag.unicodeScalars.allSatisfy(serverTagCharacters.contains) {
                let expected = members.contains(.any) || members.contains(.strong(tag)) || members.contains(.weak(tag))
                try expect(
                    Conditional.ifNoneMatch(header, matches: "\"\(tag)\"") == expected,
                    "If-None-Match matching agrees with the parsed list for a server tag",
                    observed: "tag \(tag) in \(shown(header))")
            }
        }
        try checkWritePrecondition(ifMatch: header, ifNoneMatch: fields.count > 1 ? fields[1] : nil, members: members)
    }

    private static func checkWritePrecondition(
        ifMatch: String, ifNoneMatch: String?, members: [Conditional.TagListMember]?
    ) throws(PropertyViolation) {
        let result = Result(catching: { () throws(Problem) in
            try Conditional.writePrecondition(ifMatch: ifMatch, ifNoneMatch: ifNoneMatch)
        })
        let noneMatchValid = ifNoneMatch.map { Conditional.parseTagList($0) == [.any] } ?? true
        switch result {
        case .failure(let problem):
            try expect(
                members == nil || !noneMatchValid, "a well-formed precondition is accepted",
                observed: "\(problem.detail) for \(shown(ifMatch)) / \(ifNoneMatch.map(shown) ?? "-")")
            try expect(
                problem.status == 400 && problem.type == "invalid-precondition",
                "a malformed precondition is a 400 invalid-precondition",
                observed: "\(problem.status) \(problem.type)")
            try expect((try? JSONParser.parse(bodyBytes(problem.response))) != nil, "a problem body is valid JSON")
        case .success(let condition):
            guard let members, noneMatchValid else {
                throw PropertyViolation(
                    property: "a malformed precondition is refused",
                    observed:
                        "\(String(describing: condition)) for \(shown(ifMatch)) / \(ifNoneMatch.map(shown) ?? "-")")
            }
            let matchCondition: WritePrecondition =
                members.contains(.any)
                ? .anyFeed
                : .servedFingerprint(in: members.compactMap { if case .strong(let tag) = $0 { tag } else { nil } })
            let expected: WritePrecondition = ifNoneMatch == nil ? matchCondition : .all([matchCondition, .noFeed])
            try expect(
                condition == expected,
                "If-Match keeps exactly its strong tags (or '*'), and If-None-Match adds 'no feed'",
                observed: "\(String(describing: condition)) for \(shown(ifMatch))")
        }
    }

    private static func write(_ member: Conditional.TagListMember) -> String {
        switch member {
        case .any: return "*"
        case .strong(let tag): return "\"\(tag)\""
        case .weak(let tag): return "W/\"\(tag)\""
        }
    }
}

/// The bytes of a response body built in memory.
func bodyBytes(_ response: HTTPResponse) -> [UInt8] {
    switch response.body {
    case .bytes(let bytes): return bytes
    case .shared(let shared): return shared.bytes
    case .lengthOnly, .file, .sharedFile, .suspend, .stream, .deferred: return []
    }
}
