/// Conditional-request rules (RFC 9110 §13) in one place.
enum Conditional {
    /// The strong entity tag for a fingerprint: `"<fingerprint>"`.
    static func entityTag(_ fingerprint: String) -> String { "\"\(fingerprint)\"" }

    /// Whether an `If-None-Match` value matches `entityTag` (weak comparison, as §13.1.2 requires;
    /// `*` matches any current representation).
    static func ifNoneMatch(_ header: String?, matches entityTag: String) -> Bool {
        guard let header else { return false }
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == entityTag { return true }
        }
        return false
    }
}
