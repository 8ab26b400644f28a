import ConcurrencyPrimitives

/// An expectation checked against the journal: the entries that match it, whether their number
/// is the one expected, and, when it is not, the entries that came closest and what differed.
public struct JournalVerification: Sendable {
    /// An entry that missed, and each way it missed.
    public struct NearMiss: Sendable {
        /// The entry.
        public var entry: JournalEntry
        /// One sentence per criterion it failed (`kind is delete, not publish`).
        public var differences: [String]
    }

    /// The matching entries, newest first.
    public private(set) var matched: [JournalEntry] = []
    /// Whether the count of matches is the expected one.
    public let holds: Bool
    /// Up to `maxNearMisses` entries that failed the fewest criteria, newest first among equals.
    public private(set) var nearMisses: [NearMiss] = []

    /// Whether checking stopped at `deadlineNanos` before every entry was looked at: nothing
    /// else it says can then be relied on.
    public private(set) var stoppedEarly = false
    /// Entries looked at.
    public private(set) var checked = 0

    /// Near misses reported at most.
    public static let maxNearMisses = 5

    /// Checks `expectation` against `entries` (any order; reported newest first). Misses are
    /// ranked by how many criteria they fail; only the closest few get their sentences written.
    /// Past `deadlineNanos` (`MonotonicClock.nanos()`), checking stops (`stoppedEarly`).
    public init(_ expectation: JournalExpectation, entries: [JournalEntry], deadlineNanos: Int64? = nil) {
        var closest: [(misses: Int, entry: JournalEntry)] = []
        for entry in entries.sorted(by: { $0.at > $1.at }) {
            if let deadlineNanos, MonotonicClock.nanos() > deadlineNanos {
                stoppedEarly = true
                break
            }
            checked += 1
            let misses = Self.differences(entry, expectation, describing: false).count
            guard misses > 0 else {
                matched.append(entry)
                continue
            }
            // Kept sorted by misses, the newest first among equals (the order of this loop).
            guard closest.count < Self.maxNearMisses || misses < closest[closest.count - 1].misses else { continue }
            let position = closest.firstIndex { $0.misses > misses } ?? closest.count
            closest.insert((misses, entry), at: position)
            if closest.count > Self.maxNearMisses { closest.removeLast() }
        }
        holds = expectation.count.holds(matched.count)
        if !holds {
            nearMisses = closest.map { NearMiss(entry: $0.entry, differences: Self.differences($0.entry, expectation)) }
        }
    }

    /// Every way `entry` fails `expectation`; empty when it matches. Without `describing`, each
    /// miss is an empty string (counted, not written).
    static func differences(
        _ entry: JournalEntry, _ expectation: JournalExpectation, describing: Bool = true
    )
        -> [String]
    {
        var found: [String] = []
        if let group = expectation.group, entry.group != group { found.append("group is \(entry.group), not \(group)") }
        if let kind = expectation.kind, entry.kind != kind {
            found.append("kind is \(entry.kind.rawValue), not \(kind.rawValue)")
        }
        if let result = expectation.result, entry.result != result {
            found.append("result is \(entry.result), not \(result)")
        }
        if let since = expectation.since, entry.at < since { found.append("at \(entry.at) is before since \(since)") }
        for code in expectation.warningsPresent where !entry.warnings.contains(code) {
            found.append("warning \(code) is absent")
        }
        for code in expectation.warningsAbsent where entry.warnings.contains(code) {
            found.append("warning \(code) is present")
        }
        found += payloadDifferences(entry, expectation, describing: describing)
        return found
    }

    private static func payloadDifferences(
        _ entry: JournalEntry, _ expectation: JournalExpectation, describing: Bool
    ) -> [String] {
        let criteria = expectation.equal.count + expectation.contains.count + expectation.matches.count
        guard criteria > 0 else { return [] }
        guard let bytes = entry.payload, let payload = try? JSONDocument(canonical: bytes).root else {
            let size = entry.payloadOmittedBytes.map { " (\($0) bytes, more than the journal keeps)" } ?? ""
            return ["the payload was not kept\(size)"]
        }
        var found: [String] = []
        for (pointer, text, value) in expectation.equal {
            guard let actual = pointer.resolve(in: payload) else {
                found.append("\(text) is absent")
                continue
            }
            guard let expected = try? JSONDocument.parse(value).root, Self.equal(actual, expected) else {
                found.append(describing ? "\(text) is \(shown(actual.compactBytes)), not \(shown(value[...]))" : "")
                continue
            }
        }
        for (pointer, text, part) in expectation.contains {
            let actual = pointer.resolve(in: payload)?.stringValue
            if actual?.contains(part) != true {
                found.append(describing ? "\(text) \(describe(actual)) does not contain \"\(part)\"" : "")
            }
        }
        for (pointer, text, pattern) in expectation.matches {
            let actual = pointer.resolve(in: payload)?.stringValue
            if actual.map(pattern.matches) != true {
                let long = (actual?.utf8.count ?? 0) > PayloadPattern.maxTextBytes
                let why =
                    long ? " (longer than \(PayloadPattern.maxTextBytes) bytes, which no pattern is applied to)" : ""
                found.append(describing ? "\(text) \(describe(actual)) does not match \(pattern.pattern)\(why)" : "")
            }
        }
        return found
    }

    /// JSON equality: objects whatever their members' order, arrays element by element, scalars
    /// by their canonical text (so `1.0` is `1.0`, not `1`: the journal keeps what was sent).
    static func equal(_ a: JSONNode, _ b: JSONNode) -> Bool {
        guard a.kind == b.kind else { return false }
        switch a.kind {
        case .object:
            let members = a.members
            guard members.count == b.count else { return false }
            return members.allSatisfy { name, value in b[name].map { equal(value, $0) } ?? false }
        case .array:
            let (left, right) = (a.elements, b.elements)
            return left.count == right.count && zip(left, right).allSatisfy { equal($0, $1) }
        default:
            return a.compactBytes.elementsEqual(b.compactBytes)
        }
    }

    private static func describe(_ string: String?) -> String {
        guard let string else { return "(not a string)" }
        return "\"" + (string.count > 80 ? String(string.prefix(80)) + "…" : string) + "\""
    }

    private static func shown(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(120), as: UTF8.self)
        return bytes.count > 120 ? text + "…" : text
    }
}
