import FeedStore

/// Conditional-request rules (RFC 9110 §13) in one place.
enum Conditional {
    /// The strong entity tag for a fingerprint: `"<fingerprint>"`.
    static func entityTag(_ fingerprint: String) -> String { "\"\(fingerprint)\"" }

    /// Whether an `If-None-Match` value matches `entityTag` (weak comparison, as §13.1.2 requires;
    /// `*` matches any current representation). Works on UTF-8 bytes: this runs on every revalidation.
    static func ifNoneMatch(_ header: String?, matches entityTag: String) -> Bool {
        guard var header else { return false }
        if header == entityTag { return true }
        return header.withUTF8 { bytes in
            var tag = entityTag
            return tag.withUTF8 { wanted in
                for member in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                    var candidate = member.drop { $0 == 0x20 || $0 == 0x09 }
                    while let last = candidate.last, last == 0x20 || last == 0x09 { candidate = candidate.dropLast() }
                    if candidate.elementsEqual([UInt8(ascii: "*")]) { return true }
                    if candidate.starts(with: [UInt8(ascii: "W"), UInt8(ascii: "/")]) { candidate = candidate.dropFirst(2) }
                    if candidate.elementsEqual(wanted) { return true }
                }
                return false
            }
        }
    }

    /// The write precondition of `If-Match` / `If-None-Match` on `PUT` and `DELETE`, as S3 does it:
    /// `If-Match: *` (a feed exists), `If-Match: "<fingerprint>", ...` (strong comparison: weak
    /// tags never match), `If-None-Match: *` (no feed yet). Both at once is a 400.
    static func writePrecondition(ifMatch: String?, ifNoneMatch: String?) -> Result<WritePrecondition?, Problem> {
        switch (ifMatch, ifNoneMatch) {
        case (nil, nil):
            return .success(nil)
        case (let match?, nil):
            let tags = match.split(separator: ",").map { $0.trimmingSpaces() }
            if tags == ["*"] { return .success(.anyFeed) }
            let fingerprints = tags.filter { $0.hasPrefix("\"") && $0.hasSuffix("\"") && $0.count >= 2 }.map { String($0.dropFirst().dropLast()) }
            guard !fingerprints.isEmpty || tags.allSatisfy({ $0.hasPrefix("W/") }) else {
                return .failure(.badRequest("invalid-precondition", "Invalid If-Match", "If-Match takes * or quoted entity tags (got '\(match)')."))
            }
            return .success(.servedFingerprint(in: fingerprints))
        case (nil, let noneMatch?):
            guard noneMatch.trimmingSpaces() == "*" else {
                return .failure(.badRequest("invalid-precondition", "Invalid If-None-Match",
                                            "On writes, If-None-Match takes only * (publish only if the group has no feed)."))
            }
            return .success(.noFeed)
        case (_?, _?):
            return .failure(.badRequest("invalid-precondition", "Conflicting preconditions", "Send If-Match or If-None-Match, not both."))
        }
    }
}
