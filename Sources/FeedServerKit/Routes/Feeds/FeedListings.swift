import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// `GET /feeds` and `GET /feeds/{group}/generations`.
extension FeedRoutes {
    func list() -> HTTPResponse {
        let groups: [JSONValue] = store.groups().compactMap { group in
            // Summaries, not renders: a listing reads no payload it has seen and fills no cache.
            guard let (id, served) = store.servedSummary(group: group) else { return nil }
            return .object([
                JSONMember("group", .string(group)),
                JSONMember("generationId", .string(id)),
                JSONMember("fingerprint", .string(served.fingerprint)),
                JSONMember("generatedAtEpochMs", .number(String(served.generatedAtEpochMs))),
                JSONMember("schemaVersion", .number(String(served.schemaVersion))),
                JSONMember("url", .string("/feeds/\(group)")),
            ])
        }
        return .json(
            200, CompactJSON.bytes(.object([JSONMember("groups", .array(groups))])) + [0x0A],
            headers: [("Cache-Control", "no-cache")])
    }

    func generations(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try readTarget(routed)
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        if let cached = listings.lookup(key, inputs: FolderOnly(), isCurrent: store.isCurrent) { return cached }
        let token = store.folderToken(group: group)
        guard let statuses = store.generations(group: group, schemaVersion: schemaVersion) else {
            throw Problem.noGroup(group)
        }
        let faults = store.injectedFaults(group: group)
        let entries: [JSONValue] = statuses.map { status in
            var members = [
                JSONMember("id", .string(status.id)), JSONMember("state", .string(status.state.rawValue)),
                JSONMember("reason", status.reason.map { .string($0) } ?? .null),
            ]
            if let generation = status.generation {
                members += [
                    JSONMember("schemaVersion", .number(String(generation.schemaVersion))),
                    JSONMember("generatedAtEpochMs", .number(String(generation.generatedAtEpochMs))),
                    JSONMember("fingerprint", .string(generation.fingerprint)),
                    JSONMember("assets", .number(String(generation.assets.count))),
                    JSONMember("assetBytes", .number(String(generation.assets.reduce(0) { $0 + $1.bytes }))),
                ]
            }
            if let fault = faults.first(where: { $0.folder == status.id }) {
                members.append(JSONMember("fault", FaultRoutes.json(fault)))
            }
            return .object(members)
        }
        let served = statuses.first { $0.state == .served }?.id
        let body = CompactJSON.bytes(
            .object([
                JSONMember("group", .string(group)),
                JSONMember("served", served.map { .string($0) } ?? .null),
                JSONMember("generations", .array(entries)),
                JSONMember("faults", .array(faults.map { FaultRoutes.json($0) })),
            ]))
        let response = HTTPResponse.json(200, body + [0x0A], headers: [("Cache-Control", "no-cache")])
        listings.store(key, response, token: token, inputs: FolderOnly())
        return response
    }
}

/// Answers built from a whole group folder (`/generations`, `/warnings`), per group and schema
/// filter. Each is revalidated on use by the group's folder token (`current.json`,
/// `generations/` and the fault record, one `lstat` each) and by whatever else it was made from
/// (`Inputs`: the profile, for warnings), and re-made at least once a second, so a generation
/// damaged in place shows up too.
final class ListingCache<Inputs: Equatable & Sendable>: Sendable {
    private struct Rendered {
        let response: HTTPResponse
        let token: ChangeToken
        let inputs: Inputs
        let renderedAtNanos: Int64
    }

    private let entries = Lock<[FeedResponseCache.Key: Rendered]>([:])
    private let capacity = 1024
    /// Longest time an answer is reused without re-reading the folder.
    static var maxAgeNanos: Int64 { 1_000_000_000 }

    /// The cached answer, when it was made from `inputs`, its folder has not changed and it is
    /// young enough.
    func lookup(_ key: FeedResponseCache.Key, inputs: Inputs, isCurrent: (ChangeToken) -> Bool) -> HTTPResponse? {
        guard let rendered = entries.withLock({ $0[key] }), rendered.inputs == inputs,
            MonotonicClock.nanos() - rendered.renderedAtNanos < Self.maxAgeNanos, isCurrent(rendered.token)
        else { return nil }
        return rendered.response
    }

    /// Keeps an answer made from `inputs` and a folder whose token (taken before reading it) is `token`.
    func store(_ key: FeedResponseCache.Key, _ response: HTTPResponse, token: ChangeToken, inputs: Inputs) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Rendered(
                response: response, token: token, inputs: inputs, renderedAtNanos: MonotonicClock.nanos())
        }
    }
}

/// What a listing is made from besides its folder: nothing.
struct FolderOnly: Equatable, Sendable {}
