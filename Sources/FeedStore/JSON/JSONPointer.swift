/// RFC 6901 JSON Pointers (`/quotes/0/text`; `~1` is `/`, `~0` is `~`).
public struct JSONPointer: Equatable, Sendable {
    /// The unescaped reference tokens.
    public let tokens: [String]
    /// Each token as a canonical string literal, as member names are stored in a `JSONDocument`.
    private let literals: [[UInt8]]

    /// Parses a pointer; nil when it is not `""` and does not start with `/`, or has a bad `~` escape.
    public init?(_ text: String) {
        guard !text.isEmpty else {
            self.init(tokens: [])
            return
        }
        // Bytes, not Characters: "/" followed by a combining mark is a single Character.
        guard text.utf8.first == UInt8(ascii: "/") else { return nil }
        var parsed: [String] = []
        // Unicode scalars, not Characters: a combining mark or emoji modifier after `~1`
        // must not merge with the `1` into one grapheme.
        for raw in text.unicodeScalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = String.UnicodeScalarView()
            var iterator = raw.makeIterator()
            while let scalar = iterator.next() {
                guard scalar == "~" else {
                    token.append(scalar)
                    continue
                }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default: return nil
                }
            }
            parsed.append(String(token))
        }
        self.init(tokens: parsed)
    }

    /// Pointers are equal when their tokens are (as Strings: canonically equivalent tokens are
    /// equal; the literals only speed up lookups).
    public static func == (lhs: JSONPointer, rhs: JSONPointer) -> Bool { lhs.tokens == rhs.tokens }

    /// A pointer of these unescaped tokens.
    init(tokens: [String]) {
        self.tokens = tokens
        literals = tokens.map { token in
            var literal: [UInt8] = []
            CompactJSON.writeString(token, to: &literal)
            return literal
        }
    }

    /// The value the pointer names in `document`, or nil when it names nothing.
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object:
                guard let next = current[token] else { return nil }
                current = next
            case .array(let elements):
                // Array indices: decimal, no leading zeros (RFC 6901 §4).
                guard let index = Int(token), String(index) == token, elements.indices.contains(index) else {
                    return nil
                }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The same in a document, read in place.
    public func resolve(in document: JSONNode) -> JSONNode? {
        var current = document
        for (token, literal) in zip(tokens, literals) {
            switch current.kind {
            case .object:
                guard let next = current.member(literal: literal) else { return nil }
                current = next
            case .array:
                guard let index = Int(token), String(index) == token, let next = current.element(at: index) else {
                    return nil
                }
                current = next
            default:
                return nil
            }
        }
        return current
    }
}
