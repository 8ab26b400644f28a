import FeedStore

/// The strict JSON parser, the canonical compactor and JSON Pointers over what they produce.
enum JSONTarget {
    static let target = FuzzTarget(
        name: "json",
        summary: "JSONParser + CompactJSON + JSONPointer: errors point inside the input; the compact form "
            + "reparses to the same value, is a fixed point, never longer than the input, has no whitespace "
            + "outside strings and no raw control characters; member names are unique by bytes; every node "
            + "is reachable by the JSON Pointer of its path.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(input)
        } catch {
            try expect(
                (0...input.count).contains(error.offset), "a parse error's offset lies within the input",
                observed: "offset \(error.offset) for \(input.count) bytes (\(error.reason))")
            return
        }
        let compact = CompactJSON.bytes(value)
        let reparsed: JSONValue
        do {
            reparsed = try JSONParser.parse(compact)
        } catch {
            throw PropertyViolation(
                property: "the compact form of a parsed document parses", observed: "\(error) in \(shown(compact))")
        }
        try expect(
            reparsed == value, "the compact form parses to the value it was written from", observed: shown(compact))
        try expect(CompactJSON.bytes(reparsed) == compact, "compacting is a fixed point", observed: shown(compact))
        try expect(
            (try? CompactJSON.canonicalize(input)) == compact, "canonicalize(input) equals compact(parse(input))")
        try expect(
            compact.count <= input.count, "the compact form is never longer than the input",
            observed: "\(compact.count) > \(input.count): \(shown(compact))")
        try checkCompactSyntax(compact)
        var visited = 0
        try checkTree(value, path: [], root: value, visited: &visited)
    }

    /// Outside strings: no whitespace. Inside strings: no raw byte below 0x20.
    private static func checkCompactSyntax(_ compact: [UInt8]) throws(PropertyViolation) {
        var inString = false
        var escaped = false
        for (offset, byte) in compact.enumerated() {
            if inString {
                try expect(
                    byte >= 0x20, "the compact form escapes every control character",
                    observed: "0x\(String(byte, radix: 16)) at \(offset)")
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                try expect(
                    ![0x20, 0x09, 0x0A, 0x0D].contains(byte), "the compact form has no whitespace outside strings",
                    observed: "0x\(String(byte, radix: 16)) at \(offset) in \(shown(compact))")
                if byte == UInt8(ascii: "\"") { inString = true }
            }
        }
    }

    /// Unique member names (by bytes) and pointer round trips, for the first 256 nodes.
    private static func checkTree(
        _ node: JSONValue, path: [String], root: JSONValue, visited: inout Int
    ) throws(PropertyViolation) {
        visited += 1
        guard visited <= 256 else { return }
        let text = pointerText(path)
        guard let pointer = JSONPointer(text) else {
            throw PropertyViolation(
                property: "the escaped path of a node is a valid JSON Pointer", observed: shown(text))
        }
        try expect(
            pointer.tokens == path, "a JSON Pointer's tokens are the path it was escaped from", observed: shown(text))
        try expect(
            pointer.resolve(in: root) == node, "a node's JSON Pointer resolves to that node", observed: shown(text))
        switch node {
        case .object(let members):
            var names = Set<[UInt8]>()
            for member in members {
                try expect(
                    names.insert(Array(member.name.utf8)).inserted,
                    "no object has two members with the same name bytes",
                    observed: shown(member.name))
                try checkTree(member.value, path: path + [member.name], root: root, visited: &visited)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                try checkTree(element, path: path + [String(index)], root: root, visited: &visited)
            }
        default:
            break
        }
    }

    /// RFC 6901: `~` → `~0`, `/` → `~1`, each token after a `/`.
    private static func pointerText(_ path: [String]) -> String {
        path.map { "/" + $0.replacingAll("~", with: "~0").replacingAll("/", with: "~1") }.joined()
    }
}

extension String {
    /// Replaces every occurrence of a one-scalar `target` (by scalars, not Characters, so a
    /// combining mark after it never hides it).
    func replacingAll(_ target: Unicode.Scalar, with replacement: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar == target { result.append(contentsOf: replacement.unicodeScalars) } else { result.append(scalar) }
        }
        return String(result)
    }
}
