/// One value of a `JSONDocument`, read in place: its kind, its scalar, its members or elements,
/// its canonical bytes, or (for a small part of a large document) a `JSONValue` of it.
public struct JSONNode: Sendable {
    /// The document it belongs to.
    public let document: JSONDocument
    /// Its position in the document's tape.
    let index: Int

    init(document: JSONDocument, index: Int) {
        self.document = document
        self.index = index
    }

    /// The kinds of value.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    private var entry: TapeEntry { document.tape[index] }

    /// What it is.
    public var kind: Kind {
        switch entry.kind {
        case .object: return .object
        case .array: return .array
        case .string: return .string
        case .number: return .number
        case .true, .false: return .bool
        case .null: return .null
        }
    }

    /// Its canonical compact bytes (a slice of the document's).
    public var compactBytes: ArraySlice<UInt8> {
        let start = Int(entry.start)
        return document.bytes[start..<start + Int(entry.length)]
    }

    /// The string, when this is a string (decoded from its canonical literal).
    public var stringValue: String? {
        guard entry.kind == .string else { return nil }
        return CompactJSON.decodeCanonicalString(compactBytes)
    }

    /// The number's literal text, when this is a number.
    public var numberLiteral: String? {
        guard entry.kind == .number else { return nil }
        return String(decoding: compactBytes, as: UTF8.self)
    }

    /// The number as an exact integer, when the literal is one (no fraction or exponent) and fits Int64.
    public var integerValue: Int64? {
        guard let literal = numberLiteral, !literal.contains(where: { ".eE".contains($0) }) else { return nil }
        return Int64(literal)
    }

    /// The boolean, when this is one.
    public var boolValue: Bool? {
        switch entry.kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// The members in order, when this is an object (empty otherwise).
    public var members: [(name: String, value: JSONNode)] {
        guard entry.kind == .object else { return [] }
        var members: [(name: String, value: JSONNode)] = []
        forEachMemberWhile({ name, value in
            members.append((name, value))
            return true
        })
        return members
    }

    /// The elements in order, when this is an array (empty otherwise).
    public var elements: [JSONNode] {
        elementPositions.map { JSONNode(document: document, index: Int($0)) }
    }

    /// Where each element of an array lies in the document's tape, in one pass (empty otherwise):
    /// kept, it answers the count and any element (`JSONDocument.node(atTapePosition:)`) without
    /// walking the others again.
    public var elementPositions: [UInt32] {
        guard entry.kind == .array else { return [] }
        var positions: [UInt32] = []
        var child = index + 1
        let end = document.end(of: index)
        while child < end {
            positions.append(UInt32(truncatingIfNeeded: child))
            child = document.end(of: child)
        }
        return positions
    }

    /// How many elements (an array) or members (an object) it has; 0 for a scalar.
    public var count: Int {
        var count = 0
        switch entry.kind {
        case .object: forEachMember { _, _ in count += 1 }
        case .array: forEachElement { _, _ in count += 1 }
        default: break
        }
        return count
    }

    /// The element at `position` of an array, found without listing the others.
    public func element(at position: Int) -> JSONNode? {
        guard entry.kind == .array, position >= 0 else { return nil }
        var child = index + 1
        let end = document.end(of: index)
        var seen = 0
        while child < end {
            if seen == position { return JSONNode(document: document, index: child) }
            seen += 1
            child = document.end(of: child)
        }
        return nil
    }

    /// The value of the member called `key` (compared as UTF-8 bytes), when this is an object.
    public subscript(key: String) -> JSONNode? {
        guard entry.kind == .object else { return nil }
        var wanted: [UInt8] = []
        wanted.reserveCapacity(key.utf8.count + 2)
        CompactJSON.writeString(key, to: &wanted)
        return member(literal: wanted)
    }

    /// The value of the first member whose name's canonical literal is `wanted`. Names are
    /// compared in the document's buffer: a widget profile resolves a pointer per item.
    func member(literal wanted: [UInt8]) -> JSONNode? {
        guard entry.kind == .object else { return nil }
        let end = document.end(of: index)
        let position: Int? = document.bytes.withUnsafeBufferPointer { bytes in
            wanted.withUnsafeBufferPointer { wanted in
                var child = index + 1
                while child < end {
                    let name = document.tape[child]
                    let start = Int(name.start)
                    if Int(name.length) == wanted.count,
                        UnsafeBufferPointer(rebasing: bytes[start..<start + wanted.count]).elementsEqual(wanted)
                    {
                        return child + 1
                    }
                    child = document.end(of: child + 1)
                }
                return nil
            }
        }
        return position.map { JSONNode(document: document, index: $0) }
    }

    /// Calls `body` with each member of an object in order (nothing for another kind), without
    /// listing them first.
    public func forEachMember(_ body: (_ name: String, _ value: JSONNode) throws -> Void) rethrows {
        guard entry.kind == .object else { return }
        var child = index + 1
        let end = document.end(of: index)
        while child < end {
            try body(
                JSONNode(document: document, index: child).stringValue ?? "",
                JSONNode(document: document, index: child + 1))
            child = document.end(of: child + 1)
        }
    }

    /// Calls `body` with each element of an array and its position (nothing for another kind).
    public func forEachElement(_ body: (_ position: Int, _ element: JSONNode) throws -> Void) rethrows {
        guard entry.kind == .array else { return }
        var child = index + 1
        let end = document.end(of: index)
        var position = 0
        while child < end {
            try body(position, JSONNode(document: document, index: child))
            position += 1
            child = document.end(of: child)
        }
    }

    /// Calls `body` with each member's name, as a string node, and its value (nothing for
    /// another kind): for walks that decode few of the names.
    func forEachMemberNode(_ body: (_ name: JSONNode, _ value: JSONNode) -> Void) {
        guard entry.kind == .object else { return }
        var child = index + 1
        let end = document.end(of: index)
        while child < end {
            body(JSONNode(document: document, index: child), JSONNode(document: document, index: child + 1))
            child = document.end(of: child + 1)
        }
    }

    /// Whether this is a string without escapes whose UTF-8 bytes pass `test`, read in place;
    /// false for anything else.
    func isUnescapedString(where test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        guard entry.kind == .string, entry.length >= 2 else { return false }
        let start = Int(entry.start)
        return document.bytes.withUnsafeBufferPointer { bytes in
            let inner = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(start + Int(entry.length) - 1)])
            return !ByteScan.contains(UInt8(ascii: "\\"), in: inner) && test(inner)
        }
    }

    /// Calls `body` with each member until it returns false.
    private func forEachMemberWhile(_ body: (String, JSONNode) -> Bool) {
        var child = index + 1
        let end = document.end(of: index)
        while child < end {
            let name = JSONNode(document: document, index: child).stringValue ?? ""
            guard body(name, JSONNode(document: document, index: child + 1)) else { return }
            child = document.end(of: child + 1)
        }
    }

    /// This value as a `JSONValue` tree (for a part small enough to hold as one).
    public var value: JSONValue {
        switch entry.kind {
        case .object: return .object(members.map { JSONMember($0.name, $0.value.value) })
        case .array: return .array(elements.map(\.value))
        case .string: return .string(stringValue ?? "")
        case .number: return .number(numberLiteral ?? "0")
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .null: return .null
        }
    }
}
