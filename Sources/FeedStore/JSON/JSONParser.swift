/// A strict RFC 8259 parser that keeps member order and number literals.
///
/// Strict on purpose: no comments, no trailing commas, no duplicate member names, no lone
/// surrogates, valid UTF-8 only, bounded depth and size. Every error carries a byte offset.
public enum JSONParser {
    /// Parses one JSON document (surrounding whitespace allowed) into a tree.
    public static func parse<Bytes: Collection>(
        _ input: Bytes, limits: JSONLimits = JSONLimits()
    ) throws(JSONParseError) -> JSONValue
    where Bytes.Element == UInt8 {
        try read(input, limits: limits, making: JSONTreeBuilder.init).value
    }

    /// Whether `input` is one valid JSON document, building nothing; the error when it is not.
    public static func validate<Bytes: Collection>(
        _ input: Bytes, limits: JSONLimits = JSONLimits()
    ) throws(JSONParseError) where Bytes.Element == UInt8 {
        _ = try read(input, limits: limits, making: JSONValidator.init)
    }

    /// Reads one document with a builder made for it: the one grammar every form of a document
    /// goes through. The builder is made inside and handed back, never passed `inout` through a
    /// closure: the tree and validating builders have no stored properties, every variable of such
    /// a type shares one address, and ThreadSanitizer reads two threads' writes there as a race.
    /// Made inside, it is uniquely referenced, so a capacity it reserves is not copied away.
    static func read<Bytes: Collection, Builder: JSONBuilder>(
        _ input: Bytes, limits: JSONLimits, making makeBuilder: () -> Builder
    ) throws(JSONParseError) -> (value: Builder.Value, builder: Builder)
    where Bytes.Element == UInt8 {
        // Member names are kept with 32-bit offsets (`MemberNames`): 4 GiB at most, whatever the limits.
        let most = min(limits.maxBytes, Int(UInt32.max))
        guard input.count <= most else {
            throw JSONParseError(offset: most, reason: "document larger than \(most) bytes")
        }
        if let result = input.withContiguousStorageIfAvailable({ buffer in
            Result { () throws(JSONParseError) in try read(buffer, limits: limits, with: makeBuilder()) }
        }) {
            return try result.get()
        }
        let contiguous = Array(input)
        return try contiguous.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) in try read(buffer, limits: limits, with: makeBuilder()) }
        }.get()
    }

    private static func read<Builder: JSONBuilder>(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits, with builder: consuming Builder
    ) throws(JSONParseError) -> (value: Builder.Value, builder: Builder) {
        var grammar = JSONGrammar(bytes: buffer, limits: limits, builder: builder)
        let value = try grammar.parseDocument()
        return (value, grammar.builder)
    }
}

/// The recursive-descent reading of one document, telling its builder of every value.
struct JSONGrammar<Builder: JSONBuilder> {
    let bytes: UnsafeBufferPointer<UInt8>
    private let limits: JSONLimits
    /// Where reading is (`MemberNames` moves it back to a name and returns).
    var position = 0
    /// What the document becomes.
    var builder: Builder
    /// The decoded bytes of the string just read when it had an escape, reused for every such
    /// string (no allocation per string).
    var text: [UInt8] = []
    /// The bytes between the quotes of the string just read, which are its decoded bytes (and
    /// already canonical) when it had no escape.
    var literal = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// Whether the string just read had an escape: its decoded bytes are then `text`, not `literal`.
    var textWasEscaped = false
    /// The member names of every object open on the path being read, as `MemberNames` keys;
    /// each object checks its own slice when it ends and gives it back.
    var memberNames: [UInt64] = []

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits, builder: Builder) {
        self.bytes = bytes
        self.limits = limits
        self.builder = builder
        // A member takes at least five bytes (`"":0,`): sized once for the most, never regrown.
        memberNames.reserveCapacity(bytes.count / 5 + 1)
    }

    mutating func parseDocument() throws(JSONParseError) -> Builder.Value {
        skipWhitespace()
        guard position < bytes.count else { throw fail("empty document: expected a JSON value") }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard position == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> Builder.Value {
        guard position < bytes.count else { throw fail("unexpected end of input: expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            try parseString()
            if textWasEscaped { return text.withUnsafeBufferPointer { builder.string($0, escaped: true) } }
            return builder.string(literal, escaped: false)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return builder.bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return builder.bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return builder.null()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let literal = try parseNumber()
            return builder.number(UnsafeBufferPointer(rebasing: bytes[literal]))
        default: throw fail("unexpected character \(describe(bytes[position])): expected a value")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> Builder.Value {
        guard depth <= limits.maxDepth else { throw fail("nesting deeper than \(limits.maxDepth) levels") }
        position += 1
        var object = builder.beginObject()
        let names = memberNames.count
        defer { memberNames.removeLast(memberNames.count - names) }
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return builder.endObject(object) }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw fail("expected a member name in double quotes")
            }
            let nameOffset = position
            try parseString()
            if textWasEscaped {
                memberNames.append(text.withUnsafeBufferPointer { MemberNames.key($0, offset: nameOffset) })
                text.withUnsafeBufferPointer { builder.beginMember($0, escaped: true, in: &object) }
            } else {
                memberNames.append(MemberNames.key(literal, offset: nameOffset))
                builder.beginMember(literal, escaped: false, in: &object)
            }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw fail("expected ':' after a member name") }
            skipWhitespace()
            let value = try parseValue(depth: depth)
            builder.endMember(value, in: &object)
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            if consume(UInt8(ascii: "}")) {
                try checkDuplicates(from: names)
                return builder.endObject(object)
            }
            throw fail("expected ',' or '}' after an object member")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> Builder.Value {
        guard depth <= limits.maxDepth else { throw fail("nesting deeper than \(limits.maxDepth) levels") }
        position += 1
        var array = builder.beginArray()
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return builder.endArray(array) }
        while true {
            skipWhitespace()
            builder.beginElement(in: &array)
            let value = try parseValue(depth: depth)
            builder.endElement(value, in: &array)
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            if consume(UInt8(ascii: "]")) { return builder.endArray(array) }
            throw fail("expected ',' or ']' after an array element")
        }
    }

    /// The number at `position`: its byte range, checked against the grammar and Double's range.
    private mutating func parseNumber() throws(JSONParseError) -> Range<Int> {
        let start = position
        _ = consume(UInt8(ascii: "-"))
        guard position < bytes.count, isDigit(bytes[position]) else { throw fail("expected a digit in number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) {
                throw fail("leading zeros are not allowed in numbers")
            }
        } else {
            skipDigits()
        }
        if consume(UInt8(ascii: ".")) {
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("expected a digit after '.'") }
            skipDigits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("expected a digit in exponent") }
            skipDigits()
        }
        // WidgetBridge's Swift reader (Foundation's JSONDecoder) cannot decode a number beyond
        // Double's range, so such a feed would never reach the widget: refuse it here, where the
        // offset can still be reported. Short plain literals cannot overflow, so only long ones
        // or ones with an exponent pay for the conversion.
        let range = start..<position
        let literal = UnsafeBufferPointer(rebasing: bytes[range])
        if position - start > 308 || literal.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            let text = String(decoding: literal, as: UTF8.self)
            guard Double(text)?.isFinite == true else {
                // A long literal is shown cut, and said to be: the cut alone reads as the number sent.
                let shown = text.count > 40 ? "\(text.prefix(40))… (\(text.count) characters)" : text
                throw JSONParseError(offset: start, reason: "number \(shown) is beyond the range of a double")
            }
        }
        return range
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard position + expected.count <= bytes.count,
            bytes[position..<position + expected.count].elementsEqual(expected)
        else {
            throw fail("invalid literal: expected '\(literal)'")
        }
        position += expected.count
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }

    func fail(_ reason: String) -> JSONParseError {
        JSONParseError(offset: position, reason: reason)
    }
}
