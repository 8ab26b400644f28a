import FeedStore
import HTTPTransport

/// `GET /feeds/{group}/refreshes?hours=24`: what iOS and Android would have done with the
/// group's publishes, from the journal (`ReloadLedger`): each publish reloaded or over WidgetKit's
/// budget, whether it showed anything new, and the spans a widget showed an older generation.
struct RefreshRoutes: Sendable {
    let store: FeedStore
    let journal: WriteJournal?
    let budget: Int
    let clock: any FeedClock

    var routes: [Route] {
        [
            Route(
                "/feeds/{group}/refreshes", methods: ["GET": { routed throws(Problem) in try refreshes(routed) }],
                offloaded: ["GET"], lane: .diagnostics)
        ]
    }

    func refreshes(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = routed.parameters[0]
        guard SafeName.isGroupName(group) else { throw Problem.notASafeGroupName(group) }
        let hours = try Parameters.int(routed.request.query["hours"], "hours", 1...168) ?? 24
        guard let journal else { throw Problem.journalOff }
        // A group's ledger while it has a feed, like its other sub-resources.
        guard store.servedSummary(group: group) != nil else { throw Problem.noFeed(group: group, schemaVersion: nil) }
        let entries: [JournalEntry]
        do { entries = try journal.file.entries() } catch {
            throw Problem.journalUnavailable(journal.file.reason(error))
        }
        let now = clock.nowEpochMs()
        let since = now - Int64(hours) * 3_600_000
        let ledger = ReloadLedger(entries: entries, group: group, budget: budget, since: since, now: now)
        let body = CompactJSON.bytes(Self.json(ledger, group: group, budget: budget, since: since, now: now))
        return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
    }

    static func json(_ ledger: ReloadLedger, group: String, budget: Int, since: Int64, now: Int64) -> JSONValue {
        func id(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let publishes: [JSONValue] = ledger.publishes.map { publish in
            .object([
                JSONMember("at", .number(String(publish.at))), JSONMember("generationId", id(publish.generationId)),
                JSONMember("ios", .string(publish.ios.rawValue)), JSONMember("android", .string("updated")),
                JSONMember("visible", .bool(publish.visible)),
            ])
        }
        let spans: [JSONValue] = ledger.staleSpans.map { span in
            .object([
                JSONMember("from", .number(String(span.from))), JSONMember("to", .number(String(span.to))),
                JSONMember("showing", id(span.showing)), JSONMember("missed", id(span.missed)),
            ])
        }
        return .object([
            JSONMember("group", .string(group)), JSONMember("since", .number(String(since))),
            JSONMember("now", .number(String(now))), JSONMember("iosReloadBudget", .number(String(budget))),
            JSONMember("reloadsInWindow", .number(String(ledger.reloadsInWindow))),
            JSONMember("publishes", .array(publishes)), JSONMember("staleSpans", .array(spans)),
        ])
    }
}
