import HTTPTransport

/// The query parameters a route reads, and the refusal of any other: a misspelt one
/// (`?maxDimnesion=1024`) would otherwise be ignored, and the publish succeed with the defaults.
struct KnownParameters: Sendable {
    /// The names the route reads, as sent (case-sensitive).
    let names: [String]

    /// What every publish reads (`PUT /feeds/{group}` and its `/archive`). Not `access_token`:
    /// writes take the token from the `Authorization` header only.
    static let publish = KnownParameters(names: [
        "schemaVersion", "lint", "images", "strict", "maxDimension", "maxBytes", "budgetBytes", "quality",
        "maxDecodedBytes",
    ])

    /// Throws `invalid-parameter` for the first name in `query` the route does not read, one it
    /// reads but was sent without a value (`?strict`, which would read as absent) or more than
    /// once (only the first would count). Empty names (`?&lint=strict`, what URL builders leave)
    /// name nothing and pass.
    func check(_ query: RequestFields) throws(Problem) {
        let sent = query.names
        guard !sent.isEmpty else { return }
        var seen = Set<String>()
        for name in sent where !name.isEmpty {
            guard names.contains(name) else { throw Problem.unknownParameter(name, known: names) }
            guard seen.insert(name).inserted else {
                throw Problem.invalidParameter("'\(name)' was sent more than once; send it once.")
            }
            guard query[name] != nil else {
                throw Problem.invalidParameter("'\(name)' was sent without a value ('\(name)=…').")
            }
        }
    }

    /// The known name `name` (as sent, percent-encoded) is most likely a misspelling of: the same
    /// letters in another case, or at most two edits away; nil when none is that close.
    func likelyMeant(_ name: String) -> String? {
        let decoded = PercentDecoding.decode(name, plusIsSpace: true) ?? name
        let lowered = Array(decoded.lowercased().utf8)
        // Longer than any name here by more than two edits can be: nothing to compare.
        guard lowered.count <= 32 else { return nil }
        var best: (name: String, distance: Int)?
        for known in names {
            let distance = Self.editDistance(lowered, Array(known.lowercased().utf8))
            if distance <= 2, distance < best?.distance ?? .max { best = (known, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance between two short byte strings.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension Problem {
    /// 400 for a query parameter the route does not read, naming the one it likely meant.
    static func unknownParameter(_ name: String, known: [String]) -> Problem {
        var detail = "Unknown query parameter '\(Problem.shown(name))'"
        if let meant = KnownParameters(names: known).likelyMeant(name) {
            detail += "; did you mean '\(meant)'?"
        } else {
            detail += "."
        }
        detail += " This request reads " + known.joined(separator: ", ") + "; nothing was changed."
        return .invalidParameter(detail)
    }
}
