import FeedStore
import HTTPTransport

/// `GET /journal/reads`: how often each group's feed was read and with which generation, and
/// the last requests the server answered, so a CI step can tell what a widget fetched.
extension JournalRoutes {
    /// `?group=&limit=` → `{"since","reads":[…],"otherGroupsNotFound","recent":[…],"recentCapacity"}`;
    /// `group` narrows both, `limit` (default 100) caps `recent`, newest first.
    func readHistory(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let query = routed.request.query
        let limit = try Parameters.int(query["limit"], "limit", 1...RecentRequests.maxCapacity) ?? 100
        // A filter, as in `GET /journal`: a name no group has matches nothing.
        let group = query["group"]
        let counted = reads.snapshot(group: group)
        let requests = recent?.newest(limit, matching: group.map { group in { Self.concerns($0, group: group) } }) ?? []
        let body = CompactJSON.bytes(
            .object([
                JSONMember("since", .number(String(counted.since))),
                JSONMember("reads", .array(counted.groups.map(Self.json))),
                JSONMember("otherGroupsNotFound", .number(String(counted.otherNotFound))),
                JSONMember("recent", .array(requests.map(Self.json))),
                JSONMember("recentCapacity", .number(String(recent?.capacity ?? 0))),
            ]))
        return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
    }

    /// Whether a request's path is about `group` (`/feeds/{group}` and what lies under it).
    static func concerns(_ path: String, group: String) -> Bool {
        let feed = "/feeds/" + group
        return path == feed || path.hasPrefix(feed + "/")
    }

    static func json(_ reads: ReadCounts.GroupReads) -> JSONValue {
        var members = [
            JSONMember("group", .string(reads.group)),
            JSONMember("notFound", .number(String(reads.notFound))),
            JSONMember(
                "generations",
                .array(
                    reads.generations.map { generation in
                        .object(
                            [JSONMember("generationId", .string(generation.generationId))] + json(generation.counts))
                    })),
        ]
        if !reads.earlier.isZero {
            members.append(JSONMember("earlierGenerations", .object(json(reads.earlier))))
        }
        return .object(members)
    }

    static func json(_ counts: ReadCounts.Counts) -> [JSONMember] {
        [
            JSONMember("ok", .number(String(counts.ok))),
            JSONMember("notModified", .number(String(counts.notModified))),
            JSONMember("fallbackServed", .number(String(counts.fallbackServed))),
        ]
    }

    static func json(_ record: RecentRequests.Record) -> JSONValue {
        .object([
            JSONMember("at", .number(String(record.at))),
            JSONMember("method", .string(record.method)),
            JSONMember("path", .string(record.path)),
            JSONMember("pathCut", .bool(record.pathCut)),
            JSONMember("status", .number(String(record.status))),
            JSONMember("generationId", record.generationId.map(JSONValue.string) ?? .null),
            JSONMember("fallbackReason", record.fallbackReason.map(JSONValue.string) ?? .null),
            JSONMember("client", record.client.map(JSONValue.string) ?? .null),
        ])
    }
}
