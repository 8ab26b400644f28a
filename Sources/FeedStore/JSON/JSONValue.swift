// Not `indirect`: the arrays of `object` and `array` already hold their elements on the heap,
// so no case needs a box of its own (a string or a number would pay an allocation each).

/// A parsed JSON value that keeps what the canonical form needs: member order and number literals.
public enum JSONValue: Equatable, Sendable {
    /// An object; members in the order they appeared.
    case object([JSONMember])
    /// An array.
    case array([JSONValue])
    /// A string (already unescaped).
    case string(String)
    /// A number, kept as its exact literal text (for example `1.50` or `-0`).
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// The value of the first member called `key` (compared as UTF-8 bytes, as the parser
    /// compares names, not under Unicode canonical equivalence), when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name.utf8.elementsEqual(key.utf8) }?.value
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The array elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The number as an exact integer, when the literal is one (no fraction or exponent) and fits Int64.
    public var integerValue: Int64? {
        guard case .number(let literal) = self, !literal.contains(where: { ".eE".contains($0) }) else { return nil }
        return Int64(literal)
    }
}

/// One `"name": value` pair of a JSON object.
public struct JSONMember: Equatable, Sendable {
    /// The member name.
    public var name: String
    /// The member value.
    public var value: JSONValue

    /// Creates a member.
    public init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}
