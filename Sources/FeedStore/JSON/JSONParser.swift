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
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: JSONLimits
    /// Where reading is (`MemberNames` moves it back to a name and returns).
    var position = 0
    /// What the document becomes.
    var builder: Builder
    /// Decoded string bytes, reused for every string (no allocation per string).
    var text: [UInt8] = []
    /// Whether the string just read had an escape: without one its literal is already canonical.
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
            return text.withUnsafeBufferPointer { builder.string($0, escaped: textWasEscaped) }
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
            memberNames.append(MemberNames.key(text, offset: nameOffset))
            text.withUnsafeBufferPointer { builder.beginMember($0, escaped: textWasEscaped, in: &object) }
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

    /// Reads the string literal at `position` into `text`: its unescaped UTF-8 bytes (kept as
    /// bytes so names compare exactly). Also `MemberNames`' way back to a name.
    mutating func parseString() throws(JSONParseError) {
        position += 1  // opening quote
        text.removeAll(keepingCapacity: true)
        textWasEscaped = false
        while true {
            guard position < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw fail("unescaped control character \(describe(byte)) in string")
            case 0x80...:
                let length = try validUTF8SequenceLength()
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<position + length]))
                position += length
            default:
                appendPlainRun()
            }
        }
    }

    /// Appends the run of plain ASCII bytes (no quote, backslash or control) from `position` in
    /// one step: most strings are one such run, and appending byte by byte checks the buffer
    /// for every byte.
    private mutating func appendPlainRun() {
        var end = position + 1
        while end < bytes.count, Self.isPlainASCII(bytes[end]) { end += 1 }
        text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<end]))
        position = end
    }

    /// A byte a string carries as it is: printable ASCII other than `"` and `\`.
    static func isPlainASCII(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private mutating func parseEscape() throws(JSONParseError) {
        textWasEscaped = true
        position += 1
        guard position < bytes.count else { throw fail("unterminated escape sequence") }
        let escaped = bytes[position]
        position += 1
        switch escaped {
        case UInt8(ascii: "\""): text.append(0x22)
        case UInt8(ascii: "\\"): text.append(0x5C)
        case UInt8(ascii: "/"): text.append(0x2F)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            let scalar = try parseUnicodeEscape()
            UTF8.encode(scalar) { text.append($0) }
        default:
            position -= 1
            throw fail("invalid escape sequence '\\\(describe(escaped))'")
        }
    }

    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let start = position - 2
        let first = try parseHex4()
        if (0xDC00...0xDFFF).contains(first) {
            throw JSONParseError(offset: start, reason: "lone low surrogate \\u\(hex4(first))")
        }
        guard (0xD800...0xDBFF).contains(first) else { return try scalar(first, at: start) }
        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
            bytes[position + 1] == UInt8(ascii: "u")
        else {
            throw JSONParseError(
                offset: start, reason: "high surrogate \\u\(hex4(first)) not followed by a low surrogate")
        }
        position += 2
        let second = try parseHex4()
        guard (0xDC00...0xDFFF).contains(second) else {
            throw JSONParseError(
                offset: start, reason: "high surrogate \\u\(hex4(first)) not followed by a low surrogate")
        }
        let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        return try scalar(value, at: start)
    }

    /// A scalar value the checks above already proved valid; an error, not a trap, if not.
    private func scalar(_ value: UInt32, at offset: Int) throws(JSONParseError) -> Unicode.Scalar {
        guard let scalar = Unicode.Scalar(value) else {
            throw JSONParseError(offset: offset, reason: "invalid \\u escape")
        }
        return scalar
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("expected four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = hexValue(bytes[position]) else { throw fail("expected four hex digits after \\u") }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// Length of the valid UTF-8 sequence at `position`, or an error for malformed, overlong or surrogate encodings.
    private func validUTF8SequenceLength() throws(JSONParseError) -> Int {
        let lead = bytes[position]
        let length: Int
        let minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            minimum = 0x80
            scalar = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            minimum = 0x800
            scalar = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            minimum = 0x10000
            scalar = UInt32(lead & 0x07)
        default: throw fail("invalid UTF-8 byte \(describe(lead))")
        }
        guard position + length <= bytes.count else { throw fail("truncated UTF-8 sequence") }
        for index in 1..<length {
            let continuation = bytes[position + index]
            guard continuation & 0xC0 == 0x80 else { throw fail("invalid UTF-8 sequence") }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw fail("invalid UTF-8 sequence (overlong, surrogate or out of range)")
        }
        return length
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

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)
        default: return nil
        }
    }

    private func hex4(_ value: UInt32) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }

    private func fail(_ reason: String) -> JSONParseError {
        JSONParseError(offset: position, reason: reason)
    }
}
