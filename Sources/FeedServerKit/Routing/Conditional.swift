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

    /// One member of an `If-Match` / `If-None-Match` list.
    enum TagListMember: Equatable {
        case any
        case strong(String)
        case weak(String)
    }

    /// Parses `*` or a comma-separated list of entity tags (RFC 9110 §8.8.3: `W/"..."` or `"..."`,
    /// commas allowed inside the quotes); nil when the list is malformed.
    static func parseTagList(_ header: String) -> [TagListMember]? {
        let bytes = Array(header.utf8)
        var members: [TagListMember] = []
        var index = 0
        func skipSeparators() { while index < bytes.count, [0x20, 0x09, UInt8(ascii: ",")].contains(bytes[index]) { index += 1 } }
        skipSeparators()
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "*") {
                members.append(.any)
                index += 1
            } else {
                var weak = false
                if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "W"), bytes[index + 1] == UInt8(ascii: "/") {
                    weak = true
                    index += 2
                }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                let tag = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                members.append(weak ? .weak(tag) : .strong(tag))
                index = close + 1
            }
            let before = index
            skipSeparators()
            if index == before, index < bytes.count { return nil }
        }
        return members
    }

    /// The write precondition of `If-Match` / `If-None-Match` on `PUT` and `DELETE`, as S3 does it:
    /// `If-Match: *` (a feed exists), `If-Match: "<fingerprint>", ...` (strong comparison: weak
    /// tags never match, so an empty or weak-only list never holds), `If-None-Match: *` (no feed
    /// yet). Both headers: both must hold (RFC 9110 §13.2.2 evaluates them in that order).
    static func writePrecondition(ifMatch: String?, ifNoneMatch: String?) -> Result<WritePrecondition?, Problem> {
        var conditions: [WritePrecondition] = []
        if let ifMatch {
            guard let members = parseTagList(ifMatch) else {
                return .failure(.badRequest("invalid-precondition", "Invalid If-Match", "If-Match takes * or quoted entity tags (got '\(ifMatch)')."))
            }
            if members.contains(.any) {
                conditions.append(.anyFeed)
            } else {
                conditions.append(.servedFingerprint(in: members.compactMap { if case .strong(let tag) = $0 { return tag } else { return nil } }))
            }
        }
        if let ifNoneMatch {
            guard parseTagList(ifNoneMatch) == [.any] else {
                return .failure(.badRequest("invalid-precondition", "Invalid If-None-Match",
                                            "On writes, If-None-Match takes only * (write only if the group has no feed)."))
            }
            conditions.append(.noFeed)
        }
        switch conditions.count {
        case 0: return .success(nil)
        case 1: return .success(conditions[0])
        default: return .success(.all(conditions))
        }
    }
}
