/// What a CI step expects the journal to hold (`POST /journal/verify`): entries of a group, kind
/// and result, payload values by JSON Pointer (equal, containing, matching), warning codes
/// present or absent, and how many such entries there are.
public struct JournalExpectation: Sendable {
    /// How many matching entries are expected.
    public enum Count: Sendable, Equatable {
        case exactly(Int)
        case atLeast(Int)
        case atMost(Int)

        /// Whether `matched` satisfies it.
        public func holds(_ matched: Int) -> Bool {
            switch self {
            case .exactly(let n): return matched == n
            case .atLeast(let n): return matched >= n
            case .atMost(let n): return matched <= n
            }
        }

        /// `{"exactly":2}`.
        public var json: JSONValue {
            switch self {
            case .exactly(let n): return .object([JSONMember("exactly", .number(String(n)))])
            case .atLeast(let n): return .object([JSONMember("atLeast", .number(String(n)))])
            case .atMost(let n): return .object([JSONMember("atMost", .number(String(n)))])
            }
        }
    }

    public var group: String?
    public var kind: JournalEntry.Kind?
    public var result: String?
    public var since: Int64?
    public var count: Count = .atLeast(1)
    /// Pointer → the value expected there (canonical JSON bytes).
    public var equal: [(pointer: JSONPointer, text: String, value: [UInt8])] = []
    /// Pointer → a string the value (a string) contains.
    public var contains: [(pointer: JSONPointer, text: String, part: String)] = []
    /// Pointer → a pattern the value (a string) matches.
    public var matches: [(pointer: JSONPointer, text: String, pattern: PayloadPattern)] = []
    public var warningsPresent: [String] = []
    public var warningsAbsent: [String] = []

    /// The most payload criteria (pointers of `payload`, `payloadContains`, `payloadMatches` together).
    public static let maxPayloadCriteria = 16

    /// The members an expectation may have.
    public static let memberNames = [
        "group", "kind", "result", "since", "count", "payload", "payloadContains", "payloadMatches", "warnings",
    ]

    /// Reads an expectation; each error names the member.
    public init(json bytes: [UInt8]) throws(ExpectationError) {
        let root: JSONNode
        do { root = try JSONDocument.parse(bytes, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20)).root } catch {
            throw ExpectationError("", "The expectation is not JSON: \(error).")
        }
        guard root.kind == .object else {
            throw ExpectationError(
                "", "An expectation is a JSON object such as {\"group\":\"g\",\"kind\":\"publish\"}.")
        }
        for (name, value) in root.members {
            guard Self.memberNames.contains(name) else {
                throw ExpectationError(
                    name,
                    "'\(name)' is not an expectation member; they are \(Self.memberNames.joined(separator: ", ")).")
            }
            try read(name, value)
        }
    }

    private mutating func read(_ name: String, _ value: JSONNode) throws(ExpectationError) {
        switch name {
        case "group": group = try Self.string(value, name)
        case "kind":
            let text = try Self.string(value, name)
            guard let parsed = JournalEntry.Kind(rawValue: text) else {
                throw ExpectationError(
                    name,
                    "'\(text)' is not a kind; they are \(JournalEntry.Kind.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            kind = parsed
        case "result": result = try Self.string(value, name)
        case "since":
            guard let at = value.integerValue else { throw ExpectationError(name, "'since' is epoch milliseconds.") }
            since = at
        case "count": count = try Self.count(value)
        case "warnings": try readWarnings(value)
        default: try readPayload(name, value)
        }
    }

    private mutating func readPayload(_ name: String, _ value: JSONNode) throws(ExpectationError) {
        guard value.kind == .object else {
            throw ExpectationError(
                name, "'\(name)' maps JSON Pointers to values, such as {\"/quotes/0/text\":\"two\"}.")
        }
        for (text, expected) in value.members {
            guard let pointer = JSONPointer(text) else {
                throw ExpectationError(name, "'\(text)' is not a JSON Pointer (RFC 6901), such as /quotes/0/text.")
            }
            guard equal.count + contains.count + matches.count < Self.maxPayloadCriteria else {
                throw ExpectationError(name, "An expectation has at most \(Self.maxPayloadCriteria) payload criteria.")
            }
            switch name {
            case "payload": equal.append((pointer, text, Array(expected.compactBytes)))
            case "payloadContains": contains.append((pointer, text, try Self.string(expected, name)))
            default: matches.append((pointer, text, try PayloadPattern(try Self.string(expected, name))))
            }
        }
    }

    private mutating func readWarnings(_ value: JSONNode) throws(ExpectationError) {
        guard value.kind == .object else {
            throw ExpectationError("warnings", "'warnings' is {\"present\":[codes],\"absent\":[codes]}.")
        }
        for (name, list) in value.members {
            guard name == "present" || name == "absent", list.kind == .array else {
                throw ExpectationError("warnings", "'warnings' has only \"present\" and \"absent\", lists of codes.")
            }
            let codes = list.elements.compactMap(\.stringValue)
            guard codes.count == list.count else { throw ExpectationError("warnings", "Warning codes are strings.") }
            // A misspelt code would make an "absent" check that can never fail.
            if let unknown = codes.first(where: { LintCode(rawValue: $0) == nil }) {
                throw ExpectationError(
                    "warnings",
                    "'\(unknown)' is not a warning code; they are "
                        + LintCode.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            if name == "present" { warningsPresent = codes } else { warningsAbsent = codes }
        }
    }

    private static func count(_ value: JSONNode) throws(ExpectationError) -> Count {
        let members = value.members
        guard members.count == 1, let (name, number) = members.first, let n = number.integerValue, n >= 0,
            n <= Int64(Int32.max)
        else {
            throw ExpectationError("count", "'count' is one of {\"exactly\":N}, {\"atLeast\":N}, {\"atMost\":N}.")
        }
        switch name {
        case "exactly": return .exactly(Int(n))
        case "atLeast": return .atLeast(Int(n))
        case "atMost": return .atMost(Int(n))
        default: throw ExpectationError("count", "'count' is one of {\"exactly\":N}, {\"atLeast\":N}, {\"atMost\":N}.")
        }
    }

    private static func string(_ value: JSONNode, _ name: String) throws(ExpectationError) -> String {
        guard let text = value.stringValue else { throw ExpectationError(name, "'\(name)' takes strings.") }
        return text
    }
}

/// Why an expectation is refused.
public typealias ExpectationError = MemberError
