import FeedStore
import HTTPTransport

@testable import FeedServerKit

/// Request paths: splitting into segments, percent-decoding each once, and the asset route's
/// path safety (safe names only, so the file path never leaves the generation's assets).
enum RoutingTarget {
    static let target = FuzzTarget(
        name: "routing",
        summary: "Router.segments + PercentDecoding + SafeName/GroupLayout on a request path: segments agree with an "
            + "independent byte-level decoder; a '/' or '%' inside a segment came from %2F or %25 in that segment; "
            + "decoding happens once (re-encoding gives the same segments back); '+' is a space only in queries; "
            + "three safe segments always name a file beneath the group's generations.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        // libmicrohttpd hands the path over as a C string; the daemon reads it with String(cString:).
        let path = String(decoding: input.prefix { $0 != 0 }, as: UTF8.self)
        let rawSegments = reference(path)
        let segments = Router.segments(of: path)
        try expect(
            segments == rawSegments.decoded, "Router.segments agrees with a byte-level reference decoder",
            observed:
                "\(segments.map { $0.map(shown) } as Any) vs \(rawSegments.decoded.map { $0.map(shown) } as Any) for \(shown(path))"
        )
        guard let segments else { return }
        for (raw, segment) in zip(rawSegments.raw, segments) {
            try expect(
                count(of: "/", in: segment) == escapes(of: 0x2F, in: raw),
                "a '/' in a segment comes only from %2F in it",
                observed: "\(shown(segment)) from \(shown(raw))")
            try expect(
                count(of: "%", in: segment) == escapes(of: 0x25, in: raw),
                "a '%' in a segment comes only from %25 in it (decoded once)",
                observed: "\(shown(segment)) from \(shown(raw))")
            try checkQueryDecoding(raw)
        }
        // A last segment that is empty needs the slash after it, or it would be dropped.
        let reencoded = "/" + segments.map(encode).joined(separator: "/") + (segments.last == "" ? "/" : "")
        try expect(
            Router.segments(of: reencoded) == segments, "percent-encoding the segments again gives the same segments",
            observed: shown(reencoded))
        try checkSafeNames(segments)
    }

    /// `+` means a space in a query value and nothing special in a path.
    private static func checkQueryDecoding(_ raw: String) throws(PropertyViolation) {
        let plusEncoded = raw.replacingAll("+", with: "%20")
        try expect(
            PercentDecoding.decode(raw, plusIsSpace: true) == PercentDecoding.decode(plusEncoded),
            "in a query, '+' decodes exactly as %20 does", observed: shown(raw))
        if let decoded = PercentDecoding.decode(raw) {
            try expect(
                count(of: "+", in: decoded) == count(of: "+", in: raw) + escapes(of: 0x2B, in: raw),
                "in a path, '+' stays '+'", observed: shown(raw))
        }
    }

    /// For every window of three segments (as the asset route would take them): when all are safe
    /// names, the asset's file path has no `.`/`..` component and stays beneath the group.
    private static func checkSafeNames(_ segments: [String]) throws(PropertyViolation) {
        for segment in segments {
            try expect(
                SafeName.isSafe(segment) == (SafeName.problem(with: segment) == nil),
                "SafeName.isSafe and SafeName.problem agree", observed: shown(segment))
        }
        guard segments.count >= 3 else { return }
        for start in 0...(segments.count - 3) {
            let (group, generation, name) = (segments[start], segments[start + 1], segments[start + 2])
            guard SafeName.isSafe(group), SafeName.isSafe(generation), SafeName.isSafe(name) else { continue }
            let file = GroupLayout(root: "/root", group: group).asset(generation, name)
            let components = file.split(separator: "/", omittingEmptySubsequences: false)
            try expect(
                file.hasPrefix("/root/\(group)/generations/") && components.count == 7
                    && !components.dropFirst().contains { $0.isEmpty || $0 == "." || $0 == ".." },
                "safe names always give a file path beneath the group's generations", observed: shown(file))
        }
    }

    /// Raw segments and their decoding, computed byte by byte without the production code:
    /// split on '/', drop the empty segment before a leading '/' and after a trailing one,
    /// `%XX` → byte, anything else malformed, and the result must be valid UTF-8.
    private static func reference(_ path: String) -> (raw: [String], decoded: [String]?) {
        var pieces = Array(path.utf8).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(
            Array.init)
        if path.utf8.first == UInt8(ascii: "/") { pieces.removeFirst() }
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        let raw = pieces.map { String(decoding: $0, as: UTF8.self) }
        var decoded: [String] = []
        for piece in pieces {
            var bytes: [UInt8] = []
            var index = 0
            while index < piece.count {
                if piece[index] == UInt8(ascii: "%") {
                    guard index + 2 < piece.count, let high = hexDigit(piece[index + 1]),
                        let low = hexDigit(piece[index + 2])
                    else {
                        return (raw, nil)
                    }
                    bytes.append(high * 16 + low)
                    index += 3
                } else {
                    bytes.append(piece[index])
                    index += 1
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard Array(text.utf8) == bytes else { return (raw, nil) }  // not valid UTF-8
            decoded.append(text)
        }
        return (raw, decoded)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Everything but RFC 3986 unreserved characters as `%XX`.
    private static func encode(_ segment: String) -> String {
        var text = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.append(Character(Unicode.Scalar(byte)))
            default:
                text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text
    }

    private static func count(of scalar: Unicode.Scalar, in text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + ($1 == scalar ? 1 : 0) }
    }

    /// How many `%XX` escapes in `raw` decode to `byte` (either case of hex digits).
    private static func escapes(of byte: UInt8, in raw: String) -> Int {
        let bytes = Array(raw.utf8)
        var found = 0
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), let high = hexDigit(bytes[index + 1]),
                let low = hexDigit(bytes[index + 2])
            {
                if high * 16 + low == byte { found += 1 }
                index += 3
            } else {
                index += 1
            }
        }
        return found
    }
}
