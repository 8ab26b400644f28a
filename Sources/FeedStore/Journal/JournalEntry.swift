/// One write to the store as the journal keeps it: what was asked, by whom, and what came of it.
/// A line of compact JSON in the journal file.
public struct JournalEntry: Sendable, Equatable {
    /// What kind of write.
    public enum Kind: String, Sendable, CaseIterable {
        case publish, delete, fault, restore, seed, profile
    }

    /// When the outcome was known, epoch milliseconds.
    public var at: Int64
    /// The kind of write.
    public var kind: Kind
    /// `published`, `unchanged` or `refused` for a publish, restore or seed; `deleted`, `stored`,
    /// `injected`, … for the others; `refused` whenever the write was refused.
    public var result: String
    /// The group written to.
    public var group: String
    /// The HTTP status answered (0 for a write with no request: a seed, the offline CLI).
    public var status: Int
    /// The generation written or kept, when there is one.
    public var generationId: String?
    /// Its fingerprint.
    public var fingerprint: String?
    /// The warning codes of the answer, in its order.
    public var warnings: [String]
    /// The schema version published.
    public var schemaVersion: Int?
    /// For a publish that changed the feed: whether it changed what the widget shows (by the
    /// group's profile; always true without one).
    public var visible: Bool?
    /// The problem's type (its last path component, `platform-limits`) when refused.
    public var problem: String?
    /// The request's `X-Request-Id`.
    public var requestId: String?
    /// The client's address, or `seed` / `cli` for a write with no request.
    public var client: String?
    /// The client's `User-Agent`.
    public var userAgent: String?
    /// The payload published, compact, when it is at most `maxPayloadBytes`.
    public var payload: [UInt8]?
    /// The payload's size when it was larger and left out (or could not be read as JSON).
    public var payloadOmittedBytes: Int?

    /// The largest payload an entry keeps: larger ones are marked omitted with their size.
    public static let maxPayloadBytes = 64 << 10

    /// An entry of these facts; the rest filled in later.
    public init(at: Int64, kind: Kind, result: String, group: String, status: Int) {
        self.at = at
        self.kind = kind
        self.result = result
        self.group = group
        self.status = status
        warnings = []
    }

    /// Keeps `payload` (any JSON text) in compact form when it is small enough, else its size.
    public mutating func keep(payload bytes: [UInt8]) {
        guard bytes.count <= Self.maxPayloadBytes * 4,
            let compact = try? CompactJSON.canonicalize(
                bytes, limits: JSONLimits(maxDepth: 128, maxBytes: bytes.count)),
            compact.count <= Self.maxPayloadBytes
        else {
            payload = nil
            payloadOmittedBytes = bytes.count
            return
        }
        payload = compact
        payloadOmittedBytes = nil
    }

    /// Keeps a payload already in canonical compact form (what the store wrote), as
    /// `keep(payload:)` would, without parsing it again; `sentBytes` is the size it arrived with.
    public mutating func keep(canonical bytes: [UInt8], sentBytes: Int) {
        guard sentBytes <= Self.maxPayloadBytes * 4, bytes.count <= Self.maxPayloadBytes else {
            payload = nil
            payloadOmittedBytes = sentBytes
            return
        }
        payload = bytes
        payloadOmittedBytes = nil
    }

    /// The entry as one line of compact JSON (no newline).
    public var line: [UInt8] {
        var members: [JSONMember] = [
            JSONMember("at", .number(String(at))), JSONMember("kind", .string(kind.rawValue)),
            JSONMember("result", .string(result)), JSONMember("group", .string(group)),
            JSONMember("status", .number(String(status))),
        ]
        func add(_ name: String, _ value: String?) { if let value { members.append(JSONMember(name, .string(value))) } }
        add("generationId", generationId)
        add("fingerprint", fingerprint)
        members.append(JSONMember("warnings", .array(warnings.map { .string($0) })))
        if let schemaVersion { members.append(JSONMember("schemaVersion", .number(String(schemaVersion)))) }
        if let visible { members.append(JSONMember("visible", .bool(visible))) }
        add("problem", problem)
        add("requestId", requestId)
        add("client", client)
        add("userAgent", userAgent)
        if let payloadOmittedBytes {
            members.append(JSONMember("payloadOmittedBytes", .number(String(payloadOmittedBytes))))
        }
        var bytes = CompactJSON.bytes(.object(members))
        if let payload {
            // The payload goes in as its own compact bytes, never as a tree.
            bytes.removeLast()
            bytes += Array(#","payload":"#.utf8) + payload + [UInt8(ascii: "}")]
        }
        return bytes
    }

    /// An entry read back from a line; nil for a line that is not one (a torn last line).
    public init?(line: ArraySlice<UInt8>) {
        guard let document = try? JSONDocument.parse(line, limits: JSONLimits(maxDepth: 130, maxBytes: 1 << 20)),
            case let root = document.root, root.kind == .object,
            let at = root["at"]?.integerValue, let kind = root["kind"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let result = root["result"]?.stringValue, let group = root["group"]?.stringValue,
            let status = root["status"]?.integerValue
        else { return nil }
        self.init(at: at, kind: kind, result: result, group: group, status: Int(clamping: status))
        generationId = root["generationId"]?.stringValue
        fingerprint = root["fingerprint"]?.stringValue
        warnings = root["warnings"]?.elements.compactMap(\.stringValue) ?? []
        schemaVersion = root["schemaVersion"]?.integerValue.map { Int(clamping: $0) }
        visible = root["visible"]?.boolValue
        problem = root["problem"]?.stringValue
        requestId = root["requestId"]?.stringValue
        client = root["client"]?.stringValue
        userAgent = root["userAgent"]?.stringValue
        payload = root["payload"].map { Array($0.compactBytes) }
        payloadOmittedBytes = root["payloadOmittedBytes"]?.integerValue.map { Int(clamping: $0) }
    }
}
