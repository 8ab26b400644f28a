import FeedStore

/// Journal expectations and the entries they are checked against. The input is an expectation's
/// JSON, a NUL byte, then entries' payloads (JSON texts) separated by NUL bytes.
enum ExpectationTarget {
    static let target = FuzzTarget(
        name: "expectation",
        summary: "JournalExpectation / PayloadPattern / JournalVerification: an expectation is accepted or refused "
            + "naming a member it has; a pattern is refused for its shape or compiled by regcomp; verification "
            + "splits the entries into matches and misses, holds exactly when the count does, and reports at most "
            + "five near misses, each with as many differences as it missed criteria.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let parts = input.split(separator: 0, omittingEmptySubsequences: false)
        let expectation: JournalExpectation
        do { expectation = try JournalExpectation(json: Array(parts[0])) } catch {
            let given = (try? JSONDocument.parse(parts[0]))?.root.members.map(\.name) ?? []
            try expect(
                error.member.isEmpty || JournalExpectation.memberNames.contains(error.member)
                    || given.contains(error.member),
                "a refusal names a member of the expectation", observed: "\(error.member): \(error.detail)")
            return
        }
        let entries = parts.dropFirst().prefix(64).enumerated().map { index, payload in
            var entry = JournalEntry(
                at: Int64(index), kind: index % 2 == 0 ? .publish : .seed, result: "published", group: "g", status: 201)
            entry.warnings = index % 3 == 0 ? ["asset-not-found"] : []
            entry.keep(payload: Array(payload))
            return entry
        }
        let verification = JournalVerification(expectation, entries: entries)
        try expect(
            verification.holds == expectation.count.holds(verification.matched.count),
            "verification holds exactly when the count of matches does", observed: "\(verification.matched.count)")
        try expect(
            verification.matched.count <= entries.count && verification.nearMisses.count <= 5,
            "matches and near misses come from the entries, at most five misses",
            observed: "\(verification.matched.count) matched, \(verification.nearMisses.count) misses")
        for miss in verification.nearMisses {
            try expect(
                !miss.differences.isEmpty && miss.differences.allSatisfy { !$0.isEmpty },
                "a near miss says each way it missed", observed: "\(miss.differences)")
        }
    }
}
