import FeedStore

/// The problems of the write journal and its verification.
extension Problem {
    /// 404 on a server started with `--journal off`.
    static var journalOff: Problem {
        Problem(
            status: 404, type: "journal-off", title: "Journal off",
            detail: "This server runs with --journal off: no write is recorded. Start it without that option.")
    }

    /// 503 when the journal's files cannot be read or changed now (its lock held too long, a disk error).
    static func journalUnavailable(_ reason: String) -> Problem {
        Problem(
            status: 503, type: "journal-unavailable", title: "Journal unavailable",
            detail: "The journal cannot be read or changed now: \(reason).", headers: [("Retry-After", "1")])
    }

    /// 422 for an expectation that is not valid; `member` names the member at fault.
    static func invalidExpectation(_ error: ExpectationError) -> Problem {
        Problem(
            status: 422, type: "invalid-expectation", title: "Invalid expectation", detail: error.detail,
            extensions: error.member.isEmpty ? [] : [("member", .string(error.member))])
    }

    /// 422 when the journal does not hold what was expected: how many matched, and the entries
    /// that came closest with what differed.
    static func verificationFailed(_ verification: JournalVerification, expected: JournalExpectation.Count) -> Problem {
        let matched = verification.matched.count
        var detail = "\(matched) entr\(matched == 1 ? "y" : "ies") matched; expected \(describe(expected))."
        if let nearest = verification.nearMisses.first {
            detail +=
                " Nearest miss: \(nearest.entry.kind.rawValue) of \(nearest.entry.group) at \(nearest.entry.at): "
                + nearest.differences.joined(separator: "; ") + "."
        }
        let misses: [JSONValue] = verification.nearMisses.map { miss in
            .object([
                JSONMember("entry", JournalRoutes.json(miss.entry)),
                JSONMember("differences", .array(miss.differences.map { .string($0) })),
            ])
        }
        return Problem(
            status: 422, type: "verification-failed", title: "Expectation not met", detail: detail,
            extensions: [
                ("matched", .number(String(matched))), ("count", expected.json), ("nearMisses", .array(misses)),
            ])
    }

    /// A verification that would take longer than the route allows.
    static func verificationTooCostly(_ verification: JournalVerification, of total: Int, seconds: Int) -> Problem {
        Problem(
            status: 422, type: "verification-too-costly", title: "Expectation too costly to check",
            detail:
                "Checking it took over \(seconds) s and reached \(verification.checked) of \(total) journal entries, "
                + "newest first. Narrow it with group, kind, result or since, or use fewer or shorter "
                + "payloadMatches patterns.",
            extensions: [("checked", .number(String(verification.checked))), ("entries", .number(String(total)))])
    }

    private static func describe(_ count: JournalExpectation.Count) -> String {
        switch count {
        case .exactly(let n): return "exactly \(n)"
        case .atLeast(let n): return "at least \(n)"
        case .atMost(let n): return "at most \(n)"
        }
    }
}
