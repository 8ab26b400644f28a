import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#endif

/// Conditional-request rules (RFC 9110 §13) in one place.
enum Conditional {
    /// The strong entity tag for a fingerprint: `"<fingerprint>"`.
    static func entityTag(_ fingerprint: String) -> String { "\"\(fingerprint)\"" }

    /// Whether an `If-None-Match` value matches `entityTag` (weak comparison, as §13.1.2 requires;
    /// `*` matches any current representation). A malformed value matches nothing, so the
    /// client gets the full response. Works on UTF-8 bytes: this runs on every revalidation.
    static func ifNoneMatch(_ header: String?, matches entityTag: String) -> Bool {
        guard var header else { return false }
        return header.withUTF8 { ifNoneMatch(bytes: $0, matches: entityTag) }
    }

    /// The same for the request's own `If-None-Match`, read in place (no copy of the value).
    static func ifNoneMatch(in headers: RequestFields, matches entityTag: String) -> Bool {
        headers.withBytes(of: "If-None-Match") { bytes in
            bytes.map { ifNoneMatch(bytes: $0, matches: entityTag) } ?? false
        }
    }

    /// The same for a value read in place as a C string (nil: no `If-None-Match`).
    static func ifNoneMatch(cString value: UnsafePointer<CChar>?, matches entityTag: String) -> Bool {
        guard let value else { return false }
        return value.withMemoryRebound(to: UInt8.self, capacity: 1) { start in
            ifNoneMatch(bytes: UnsafeBufferPointer(start: start, count: strlen(value)), matches: entityTag)
        }
    }

    /// The same over the value's bytes.
    static func ifNoneMatch(bytes: UnsafeBufferPointer<UInt8>, matches entityTag: String) -> Bool {
        var wanted = entityTag
        return wanted.withUTF8 { tag in
            // The usual revalidation: exactly our tag.
            if bytes.count == tag.count, let sent = bytes.baseAddress, let ours = tag.baseAddress,
                memcmp(sent, ours, tag.count) == 0
            {
                return true
            }
            // The opaque part of our own tag: what is between its quotes.
            guard tag.count >= 2 else { return false }
            let opaque = UnsafeBufferPointer(rebasing: tag[1..<(tag.count - 1)])
            var matched = false
            let wellFormed = walkTagList(bytes) { member in
                switch member {
                case .any: matched = true
                case .tag(let range, _): matched = matched || bytes[range].elementsEqual(opaque)
                }
            }
            return wellFormed && matched
        }
    }

    /// One member of an `If-Match` / `If-None-Match` list.
    enum TagListMember: Equatable {
        case any
        case strong(String)
        case weak(String)
    }

    /// Parses `*` or a comma-separated list of entity tags (RFC 9110 §8.8.3); nil when malformed.
    static func parseTagList(_ header: String) -> [TagListMember]? {
        var header = header
        return header.withUTF8 { bytes in
            var members: [TagListMember] = []
            let wellFormed = walkTagList(bytes) { member in
                switch member {
                case .any: members.append(.any)
                case .tag(let range, let weak):
                    let tag = String(decoding: bytes[range], as: UTF8.self)
                    members.append(weak ? .weak(tag) : .strong(tag))
                }
            }
            return wellFormed ? members : nil
        }
    }

    private enum WalkedMember {
        case any
        /// The opaque tag (between the quotes) and whether it was `W/`.
        case tag(Range<Int>, weak: Bool)
    }

    /// Walks an `If-Match` / `If-None-Match` value without copying it: `*` alone, or a list of
    /// `"opaque"` / `W/"opaque"` separated by commas with optional blanks around them, empty
    /// elements allowed (RFC 9110 §5.6.1). Opaque tags are `etagc` bytes (no blanks, no quotes;
    /// commas allowed). Returns false, possibly after some members, when the value is malformed.
    private static func walkTagList(_ bytes: UnsafeBufferPointer<UInt8>, _ visit: (WalkedMember) -> Void) -> Bool {
        var index = 0
        func skipBlanks() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        skipBlanks()
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            skipBlanks()
            guard index == bytes.count else { return false }
            visit(.any)
            return true
        }
        while true {
            skipBlanks()
            guard index < bytes.count else { return true }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            var weak = false
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "W"), bytes[index + 1] == UInt8(ascii: "/") {
                weak = true
                index += 2
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                // etagc = %x21 / %x23-7E / obs-text
                guard bytes[end] == 0x21 || bytes[end] >= 0x23, bytes[end] != 0x7F else { return false }
                end += 1
            }
            guard end < bytes.count else { return false }
            visit(.tag(start..<end, weak: weak))
            index = end + 1
            skipBlanks()
            // Members are separated by commas, not just blanks.
            guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { return false }
        }
    }

    /// The write precondition of `If-Match` / `If-None-Match` on `PUT` and `DELETE`, as S3 does it:
    /// `If-Match: *` (a feed exists), `If-Match: "<fingerprint>", ...` (strong comparison: weak
    /// tags never match, so an empty or weak-only list never holds), `If-None-Match: *` (no feed
    /// yet). Both headers: both must hold (RFC 9110 §13.2.2 evaluates them in that order).
    static func writePrecondition(ifMatch: String?, ifNoneMatch: String?) throws(Problem) -> WritePrecondition? {
        var conditions: [WritePrecondition] = []
        if let ifMatch {
            guard let members = parseTagList(ifMatch) else {
                throw Problem.invalidIfMatch(ifMatch)
            }
            if members.contains(.any) {
                conditions.append(.anyFeed)
            } else {
                conditions.append(
                    .servedFingerprint(
                        in: members.compactMap { if case .strong(let tag) = $0 { return tag } else { return nil } }))
            }
        }
        if let ifNoneMatch {
            guard parseTagList(ifNoneMatch) == [.any] else {
                throw Problem.invalidIfNoneMatchOnWrite
            }
            conditions.append(.noFeed)
        }
        switch conditions.count {
        case 0: return nil
        case 1: return conditions[0]
        default: return .all(conditions)
        }
    }
}
