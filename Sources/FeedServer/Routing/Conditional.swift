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
}
