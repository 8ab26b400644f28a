/// The reading of string literals: their bytes, escapes and UTF-8, checked as RFC 8259 says.
extension JSONGrammar {
    /// Reads the string literal at `position`: `literal` holds its bytes and, when it has an
    /// escape, `text` its decoded ones (kept as bytes so names compare exactly). Also
    /// `MemberNames`' way back to a name.
    mutating func parseString() throws(JSONParseError) {
        position += 1  // opening quote
        let start = position
        textWasEscaped = false
        while true {
            position = ByteScan.plainStringRunEnd(in: bytes, from: position)
            guard position < bytes.count else { throw fail("unterminated string") }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                literal = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return
            case UInt8(ascii: "\\"):
                text.removeAll(keepingCapacity: true)
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
                textWasEscaped = true
                try decodeEscapedRest()
                literal = UnsafeBufferPointer(rebasing: bytes[start..<position - 1])
                return
            case 0..<0x20: throw fail("unescaped control character \(describe(bytes[position])) in string")
            default: position += try validUTF8SequenceLength()
            }
        }
    }

    /// Decodes the rest of a string into `text` from its first escape, through its closing quote.
    private mutating func decodeEscapedRest() throws(JSONParseError) {
        while true {
            let run = ByteScan.plainStringRunEnd(in: bytes, from: position)
            text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<run]))
            position = run
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
            default:
                let length = try validUTF8SequenceLength()
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<position + length]))
                position += length
            }
        }
    }

    /// The decoded bytes of the string just read, as an array of their own.
    var decodedString: [UInt8] { textWasEscaped ? text : Array(literal) }

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
}
