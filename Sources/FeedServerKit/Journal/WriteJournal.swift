import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import Synchronization

/// What a write route knows of its outcome that a journal entry needs, set on its answer
/// (`HTTPResponse.annotation`); a refusal has none, and the journal takes what the request shows.
struct JournalFacts: Sendable {
    var result: String
    var generationId: String? = nil
    var fingerprint: String? = nil
    var warnings: [String] = []
    var schemaVersion: Int? = nil
    /// The payload as published: as sent (any JSON text; compacted and bounded when recorded), or
    /// in the canonical form the store wrote.
    var payload: JournalPayload? = nil
    /// For a publish that changed the feed: whether its profile shows anything new.
    var visible: Bool? = nil
}

/// A payload for the journal: as the client sent it, or as the store wrote it (canonical, with the
/// size it was sent with).
enum JournalPayload: Sendable {
    case sent([UInt8])
    case canonical([UInt8], sentBytes: Int)
}

/// The write journal of a server: every write that reached its route (publish, restore, delete,
/// fault, profile), seeds and the offline CLI's publishes, appended to `JournalFile` once the
/// answer is known, on the thread that computed it (the work pool, never libmicrohttpd's).
final class WriteJournal: Sendable {
    let file: JournalFile
    let clock: any FeedClock
    /// Entries that could not be appended (the lock held too long, a full disk): counted, and the
    /// write itself answered as it was.
    let lost = Atomic<Int>(0)

    init(file: JournalFile, clock: any FeedClock = SystemClock()) {
        self.file = file
        self.clock = clock
    }

    /// The kind of write a route and method are, nil for one the journal does not record.
    static func kind(route: String, method: String) -> JournalEntry.Kind? {
        switch (route, method) {
        case ("/feeds/{group}", "PUT"): return .publish
        case ("/feeds/{group}", "DELETE"): return .delete
        case ("/feeds/{group}/archive", "PUT"): return .restore
        case ("/feeds/{group}/faults", "POST"): return .fault
        case ("/feeds/{group}/profile", "PUT"), ("/feeds/{group}/profile", "DELETE"): return .profile
        default: return nil
        }
    }

    /// Records the answer to a write on a journaled route; nothing for other routes.
    func record(route: String, routed: RoutedRequest, response: HTTPResponse, problem: Problem?) {
        // A name that is no group's never wrote anything, and is not worth a line.
        guard let kind = Self.kind(route: route, method: routed.request.method), let group = routed.parameters.first,
            SafeName.isGroupName(group)
        else { return }
        let request = routed.request
        // A refusal has no facts: the journal takes what the request and the problem show.
        let facts =
            response.annotation as? JournalFacts
            ?? JournalFacts(
                result: "refused", warnings: problem.map(Self.warningCodes) ?? [],
                payload: Self.sentPayload(request, kind: kind).map(JournalPayload.sent))
        var entry = entry(kind, group: group, status: response.status, facts: facts)
        entry.problem = problem.map { String($0.type) }
        entry.requestId = request.headers["X-Request-Id"].flatMap(RequestID.sane)
        entry.client = request.clientAddress
        entry.userAgent = request.headers["User-Agent"].map { String(decoding: $0.utf8.prefix(256), as: UTF8.self) }
        append(entry)
    }

    /// Records a write made without a request: a seed folder's publish, the offline CLI's.
    func record(kind: JournalEntry.Kind, group: String, client: String, facts: JournalFacts, problem: String? = nil) {
        var entry = entry(kind, group: group, status: 0, facts: facts)
        entry.problem = problem
        entry.client = client
        append(entry)
    }

    /// An entry of `facts`, stamped now.
    private func entry(_ kind: JournalEntry.Kind, group: String, status: Int, facts: JournalFacts) -> JournalEntry {
        var entry = JournalEntry(at: clock.nowEpochMs(), kind: kind, result: facts.result, group: group, status: status)
        entry.generationId = facts.generationId
        entry.fingerprint = facts.fingerprint
        entry.warnings = facts.warnings
        entry.schemaVersion = facts.schemaVersion
        entry.visible = facts.visible
        switch facts.payload {
        case .sent(let bytes): entry.keep(payload: bytes)
        case .canonical(let bytes, let sentBytes): entry.keep(canonical: bytes, sentBytes: sentBytes)
        case nil: break
        }
        return entry
    }

    /// Appends, or says in the log that an entry was lost (the write itself stands).
    private func append(_ entry: JournalEntry) {
        do { try file.append(entry) } catch {
            lost.add(1, ordering: .relaxed)
            AccessLog.message(
                LogSafe.line(
                    "feed-server: journal: the \(entry.kind.rawValue) of group '\(LogSafe.name(entry.group))' at "
                        + "\(entry.at) was not recorded: \(file.reason(error))"))
        }
    }

    /// The payload a refused publish carried: its JSON body or multipart `payload` part.
    private static func sentPayload(_ request: HTTPRequest, kind: JournalEntry.Kind) -> [UInt8]? {
        guard kind == .publish else { return nil }
        if request.mediaType == "application/json" { return request.body }
        return request.parts?.first { $0.name == "payload" && $0.file == nil }?.bytes
    }

    /// The codes of a `platform-limits` refusal's warnings.
    static func warningCodes(_ problem: Problem) -> [String] {
        let warnings = problem.extensions.first { $0.0 == "warnings" }?.1.arrayValue ?? []
        return warnings.compactMap { $0["code"]?.stringValue }
    }
}
