import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// `/journal`: the writes this root has seen, newest first, and `POST /journal/verify`, which
/// answers `2xx` when the journal holds what a CI step expects and a problem naming the nearest
/// misses when it does not, so `curl -f` fails the step (docs/recipes.md, "Verify in CI").
struct JournalRoutes: Sendable {
    /// Nil with `--journal off`: the routes of the write journal answer `404 journal-off`.
    let journal: WriteJournal?
    /// Feed reads counted per group and generation, kept whatever `--journal` says.
    let reads: ReadCounts
    /// The last answered requests (nil: `--recent-requests 0`).
    let recent: RecentRequests?

    /// The verify route, which takes the read token although it is a `POST`.
    static let verifyTemplate = "/journal/verify"

    var routes: [Route] {
        [
            Route(
                "/journal",
                methods: [
                    "GET": { routed throws(Problem) in try list(routed) },
                    "DELETE": { _ throws(Problem) in try clear() },
                ], offloaded: ["GET", "DELETE"], lane: .diagnostics),
            Route(
                Self.verifyTemplate, methods: ["POST": { routed throws(Problem) in try verify(routed) }],
                bodies: ["POST": Self.expectation.policy], offloaded: ["POST"], lane: .diagnostics),
            Route(
                "/journal/reads", methods: ["GET": { routed throws(Problem) in try readHistory(routed) }],
                offloaded: ["GET"], lane: .diagnostics),
        ]
    }

    /// The longest a verification may check entries: a work-pool thread is not held longer.
    static let verifySeconds = 2

    /// An expectation is a small JSON object.
    static let expectation = SmallJSONBody(
        name: "an expectation", example: #"{"group":"g","kind":"publish"}"#, limit: 64 << 10)

    /// `?group=&kind=&result=&since=&limit=&pageToken=` → `{"entries":[…],"nextPageToken":…}`.
    func list(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let query = routed.request.query
        let limit = try Parameters.int(query["limit"], "limit", 1...1_000) ?? 100
        let since = try Parameters.int64(query["since"], "since")
        let cursor = try query["pageToken"].map { text throws(Problem) in try JournalCursor(text) }
        var kind: JournalEntry.Kind?
        if let text = query["kind"] {
            guard let parsed = JournalEntry.Kind(rawValue: text) else {
                throw Problem.invalidParameter(
                    "kind must be one of \(JournalEntry.Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            kind = parsed
        }
        let selected = try entries().filter { entry in
            (query["group"].map { entry.group == $0 } ?? true) && (kind.map { entry.kind == $0 } ?? true)
                && (query["result"].map { entry.result == $0 } ?? true) && (since.map { entry.at >= $0 } ?? true)
        }
        let page = JournalCursor.page(selected, after: cursor, limit: limit)
        var body = Array(#"{"entries":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += entry.line
        }
        body += Array(#"],"nextPageToken":"#.utf8)
        CompactJSON.write(page.next.map { .string($0.text) } ?? .null, to: &body)
        body += Array("}\n".utf8)
        return .json(200, body, headers: [("Cache-Control", "no-store")])
    }

    /// Empties the journal, the read counts and the request history: `204` (with `--journal off`
    /// too, which keeps no journal to empty).
    func clear() throws(Problem) -> HTTPResponse {
        reads.reset(now: SystemClock().nowEpochMs())
        recent?.clear()
        if let journal {
            do { try journal.file.clear() } catch { throw Problem.journalUnavailable(journal.file.reason(error)) }
        }
        return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
    }

    /// `200 {"matched","count","entries"}` when the expectation holds, else `422
    /// verification-failed` with `matched`, `count` and `nearMisses`.
    func verify(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        try Self.expectation.requireJSON(routed.request)
        let expectation: JournalExpectation
        do { expectation = try JournalExpectation(json: routed.request.body) } catch {
            throw Problem.invalidExpectation(error)
        }
        let journal = try entries()
        let deadline = MonotonicClock.nanos() + Int64(Self.verifySeconds) * 1_000_000_000
        let verification = JournalVerification(expectation, entries: journal, deadlineNanos: deadline)
        if verification.stoppedEarly {
            throw Problem.verificationTooCostly(verification, of: journal.count, seconds: Self.verifySeconds)
        }
        guard verification.holds else { throw Problem.verificationFailed(verification, expected: expectation.count) }
        let shown = verification.matched.prefix(20).map(Self.json)
        let body = CompactJSON.bytes(
            .object([
                JSONMember("matched", .number(String(verification.matched.count))),
                JSONMember("count", expectation.count.json), JSONMember("entries", .array(shown)),
            ]))
        return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
    }

    private func entries() throws(Problem) -> [JournalEntry] {
        guard let journal else { throw Problem.journalOff }
        do { return try journal.file.entries() } catch { throw Problem.journalUnavailable(journal.file.reason(error)) }
    }

    /// An entry as a JSON value (its own line, parsed back).
    static func json(_ entry: JournalEntry) -> JSONValue {
        (try? JSONParser.parse(entry.line)) ?? .null
    }
}

/// Where a page of the journal ends: the time of its last entry and how many entries of that
/// time it showed, so entries appended meanwhile (newer) never shift the next page.
struct JournalCursor: Equatable {
    var at: Int64
    var shownAtThatTime: Int

    /// `<at>.<n>`.
    var text: String { "\(at).\(shownAtThatTime)" }

    init(at: Int64, shownAtThatTime: Int) {
        self.at = at
        self.shownAtThatTime = shownAtThatTime
    }

    init(_ text: String) throws(Problem) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let at = Int64(parts[0]), let shown = Int(parts[1]), shown >= 0 else {
            throw Problem.invalidParameter("pageToken is a nextPageToken a journal answer gave (got '\(text)').")
        }
        self.init(at: at, shownAtThatTime: shown)
    }

    /// Up to `limit` of `entries` (oldest first, as the journal holds them) newest first, after
    /// `cursor`; the cursor of the next page when more remain.
    static func page(
        _ entries: [JournalEntry], after cursor: JournalCursor?, limit: Int
    ) -> (entries: [JournalEntry], next: JournalCursor?) {
        // Newest first: by time, and among entries of one millisecond, the last appended first.
        let reversed = Array(entries.reversed())
        var remaining = reversed.indices.sorted { (reversed[$0].at, $1) > (reversed[$1].at, $0) }.map { reversed[$0] }[
            ...]
        if let cursor {
            remaining = remaining.drop { $0.at > cursor.at }
            let skip = min(cursor.shownAtThatTime, remaining.prefix { $0.at == cursor.at }.count)
            remaining = remaining.dropFirst(skip)
        }
        let page = Array(remaining.prefix(limit))
        guard remaining.count > limit, let last = page.last else { return (page, nil) }
        let sameTime = page.reversed().prefix { $0.at == last.at }.count
        let earlier = cursor.map { $0.at == last.at ? $0.shownAtThatTime : 0 } ?? 0
        return (page, JournalCursor(at: last.at, shownAtThatTime: sameTime + earlier))
    }
}
