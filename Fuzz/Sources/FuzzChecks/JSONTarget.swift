import FeedStore

/// The strict JSON parser, the canonical compactor and JSON Pointers over what they produce.
enum JSONTarget {
    static let target = FuzzTarget(
        name: "json",
        summary: "JSONParser + CompactJSON + JSONDocument + JSONPointer: errors point inside the input; a "
            + "document and a tree agree (same errors, same canonical bytes, same values, same pointers); the compact form "
            + "reparses to the same value, is a fixed point, never longer than the input, has no whitespace "
            + "outside strings and no raw control characters; member names are unique by bytes; every node "
            + "is reachable by the JSON Pointer of its path.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let value: JSONValue
        let document = Result(catching: { () throws(JSONParseError) in try JSONDocument.parse(input) })
        do {
            value = try JSONParser.parse(input)
        } catch {
            try expect(
                (0...input.count).contains(error.offset), "a parse error's offset lies within the input",
                observed: "offset \(error.offset) for \(input.count) bytes (\(error.reason))")
            guard case .failure(let documentError) = document, documentError == error else {
                throw PropertyViolation(
                    property: "a document refuses what the tree parser refuses, with its error",
                    observed: "\(error) vs \(document)")
            }
            try expect(
                (try? JSONParser.validate(input)) == nil, "validation refuses what the tree parser refuses")
            return
        }
        guard case .success(let parsed) = document else {
            throw PropertyViolation(property: "a document parses what the tree parser parses", observed: "\(document)")
        }
        try checkDocument(parsed, value: value)
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

    /// A document's canonical bytes, its values and its pointers agree with the tree's.
    private static func checkDocument(_ document: JSONDocument, value: JSONValue) throws(PropertyViolation) {
        try expect(
            document.bytes == CompactJSON.bytes(value), "a document's bytes are the canonical compact form",
            observed: shown(document.bytes))
        try expect(document.root.value == value, "a document's root reads as the tree's value")
        var checked = 0
        try checkNodes(document.root, value, root: document.root, path: [], checked: &checked)
    }

    private static func checkNodes(
        _ node: JSONNode, _ value: JSONValue, root: JSONNode, path: [String], checked: inout Int
    ) throws(PropertyViolation) {
        checked += 1
        guard checked <= 256 else { return }
        try expect(
            Array(node.compactBytes) == CompactJSON.bytes(value), "a node's bytes are its value's canonical bytes",
            observed: shown(Array(node.compactBytes)))
        let pointer = JSONPointer(pointerText(path))
        try expect(
            pointer.flatMap { $0.resolve(in: root) }.map { Array($0.compactBytes) } == CompactJSON.bytes(value),
            "a pointer resolves in a document to the node it names", observed: shown(pointerText(path)))
        switch value {
        case .object(let members):
            let nodes = node.members
            try expect(nodes.map(\.name) == members.map(\.name), "a node's members are the tree's, in order")
            for (member, pair) in zip(members, nodes) {
                try checkNodes(pair.value, member.value, root: root, path: path + [member.name], checked: &checked)
            }
        case .array(let elements):
            let nodes = node.elements
            try expect(nodes.count == elements.count, "a node has the tree's elements")
            for (index, (element, child)) in zip(elements, nodes).enumerated() {
                try checkNodes(child, element, root: root, path: path + [String(index)], checked: &checked)
            }
        case .string(let text):
            try expect(node.stringValue == text, "a string node reads as its text", observed: shown(text))
        case .number(let literal):
            try expect(node.numberLiteral == literal, "a number node keeps its literal", observed: literal)
        case .bool(let flag):
            try expect(node.boolValue == flag, "a boolean node reads as its value")
        case .null:
            try expect(node.kind == .null, "a null node is null")
        }
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
