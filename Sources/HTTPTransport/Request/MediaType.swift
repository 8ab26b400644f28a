/// A `Content-Type`'s essence: the type without parameters or surrounding blanks, lowercased
/// (`Application/JSON ; charset=utf-8` → `application/json`). Done on bytes, since it runs on every
/// request with a body; a type with any non-ASCII byte (no media type has one, RFC 9110 §8.3.1)
/// is lowered as Unicode text, so the essence is lowercase whatever was sent.
enum MediaType {
    /// The essence of a header value.
    static func essence(_ value: String) -> String {
        var value = value
        return value.withUTF8 { essence(bytes: $0) }
    }

    /// The essence of a header value's bytes.
    static func essence(bytes: UnsafeBufferPointer<UInt8>) -> String {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
        var start = 0
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        let type = bytes[start..<end]
        guard type.allSatisfy({ $0 < 0x80 }) else { return String(decoding: type, as: UTF8.self).lowercased() }
        return String(decoding: type.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
