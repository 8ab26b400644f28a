/// Writes JSON in the compact canonical form of feed format v1 (what kotlinx-serialization emits).
///
/// No insignificant whitespace, members in their given order, numbers as their literal text,
/// strings escaped minimally: `\"`, `\\`, `\b \t \n \f \r`, `\u00xx` for other controls,
/// everything else (including `/` and non-ASCII) raw UTF-8.
public enum CompactJSON {
    /// The canonical compact bytes of a value.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        // Most answers are a few hundred bytes: one allocation instead of a doubling series.
        output.reserveCapacity(512)
        write(value, to: &output)
        return output
    }

    /// Parses `input` strictly and returns its canonical compact bytes, written as it is read:
    /// no tree is built, so a payload costs about twice its size while it is canonicalised.
    public static func canonicalize<Bytes: Collection>(
        _ input: Bytes, limits: JSONLimits = JSONLimits()
    ) throws(JSONParseError) -> [UInt8]
    where Bytes.Element == UInt8 {
        try JSONDocument.parse(input, limits: limits).bytes
    }

    /// Appends the canonical compact form of `value` to `output`.
    public static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.name, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .string(let text): writeString(text, to: &output)
        case .number(let literal): output.append(contentsOf: literal.utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal with minimal escaping.
    public static func writeString(_ text: String, to output: inout [UInt8]) {
        // A native string lends its UTF-8 as it is; only a bridged or lazy one is copied first.
        let lent: Void? = text.utf8.withContiguousStorageIfAvailable { writeString(bytes: $0, to: &output) }
        if lent == nil {
            var text = text
            text.withUTF8 { writeString(bytes: $0, to: &output) }
        }
    }

    /// Appends a string's UTF-8 bytes as a JSON string literal with minimal escaping.
    public static func writeString(bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var plainStart = 0
        // A plain index loop: `enumerated()` looks its generic iterator's type up per byte in an
        // unoptimised build (the test suite's), which the sanitizers make a contended lock.
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            // Bytes written as they are go out in runs, not one append each.
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") { continue }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plainStart..<index - 1]))
            plainStart = index
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: break  // unreachable: the bytes that reach the switch are the cases above
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plainStart..<bytes.count]))
        output.append(UInt8(ascii: "\""))
    }

    /// The text of a string literal in canonical form (as `writeString` writes it): only the
    /// escapes it uses are undone, so this is no general JSON string decoder.
    public static func decodeCanonicalString(_ literal: ArraySlice<UInt8>) -> String {
        guard literal.count >= 2 else { return "" }
        let inner = literal.dropFirst().dropLast()
        // Most strings have no escape: decoded straight from the buffer.
        let plain = inner.withUnsafeBufferPointer { buffer in
            ByteScan.contains(UInt8(ascii: "\\"), in: buffer) ? nil : String(decoding: buffer, as: UTF8.self)
        }
        if let plain { return plain }
        var text: [UInt8] = []
        text.reserveCapacity(inner.count)
        var index = inner.startIndex
        while index < inner.endIndex {
            let byte = inner[index]
            index += 1
            guard byte == UInt8(ascii: "\\"), index < inner.endIndex else {
                text.append(byte)
                continue
            }
            let escaped = inner[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "u"):
                // `\u00xx`: a control character.
                guard index + 4 <= inner.endIndex,
                    let code = UInt8(String(decoding: inner[index + 2..<index + 4], as: UTF8.self), radix: 16)
                else {
                    break
                }
                text.append(code)
                index += 4
            default: text.append(escaped)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
