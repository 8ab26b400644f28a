/// How a payload string names an image file, the rules `asset-not-found` and
/// `asset-unreferenced` share (docs/widget-limits.md, "Which strings name an image").
enum ImageReference {
    /// File extensions that make a string an image file name (compared case-insensitively).
    static let imageExtensions = [".png", ".jpg", ".jpeg", ".webp", ".gif", ".heic"]

    /// What one payload string says about images.
    struct Reading: Equatable {
        /// The file name it points at: the string itself, or its last path component.
        var fileName: String
        /// Whether it is a URL with a scheme (`https://…`, `data:…`): the app fetches those
        /// itself, so they count as references but are never reported missing.
        var isURL: Bool
    }

    /// The image file a string names, or nil when it names none (no image extension).
    ///
    /// `q1.jpg` names `q1.jpg`; so do `assets/q1.jpg`, `./q1.jpg` and the server's own
    /// `/assets/g/<id>/q1.jpg` (the last path component). For URLs the query and fragment are
    /// dropped first, so `https://cdn.example/q1.jpg?v=2` names `q1.jpg` too.
    static func read(_ string: String) -> Reading? {
        var string = string
        // Bytes, not Characters: every byte compared is ASCII, which UTF-8 never uses inside a
        // longer sequence, and every payload string passes here.
        return string.withUTF8 { bytes in
            let isURL = hasScheme(bytes)
            var path = bytes[...]
            if isURL, let end = path.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
                path = path[..<end]
            }
            // Most payload strings are not file names: decide on the last bytes before splitting.
            guard hasImageExtension(path) else { return nil }
            let fileName = path.lastIndex(of: UInt8(ascii: "/")).map { path[($0 + 1)...] } ?? path
            guard hasImageExtension(fileName) else { return nil }
            return Reading(
                fileName: String(decoding: UnsafeBufferPointer(rebasing: fileName), as: UTF8.self), isURL: isURL)
        }
    }

    /// Whether `read` may find an image in these UTF-8 bytes: they end in an image extension, or
    /// have a `?` or `#` that a URL's query or fragment would be cut at. False means it finds none.
    static func mayName(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        hasImageExtension(bytes) || bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
    }

    /// Whether the bytes end, ASCII case-insensitively, in one of `imageExtensions` with
    /// something before it.
    ///
    /// The answer comes from one word: the last six bytes, each ORed with 0x20 (ASCII lower
    /// case) and packed last-first, masked to each extension's length.
    static func hasImageExtension(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var tail: UInt64 = 0
        var count = 0
        var index = bytes.endIndex
        while count < 6, index > bytes.startIndex {
            index -= 1
            tail |= UInt64(bytes[index] | 0x20) << (8 * count)
            count += 1
        }
        return packedExtensions.contains { $0.length < count && tail & $0.mask == $0.packed }
    }

    /// `imageExtensions` as `hasImageExtension` compares them.
    private static let packedExtensions: [(length: Int, mask: UInt64, packed: UInt64)] = imageExtensions.map {
        suffix in
        let bytes = Array(suffix.utf8.reversed())
        let packed = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element | 0x20) << (8 * $1.offset) }
        return (bytes.count, (UInt64(1) << (8 * bytes.count)) - 1, packed)
    }

    /// Whether `string` names `asset` in WidgetBridge's own idiom: the asset's name without
    /// its extension (`"id": "q1"` for `q1.jpg`, as its README builds
    /// the name from the item's id). Counts as a reference, never as a missing file.
    static func isStem(_ string: String, of asset: String) -> Bool {
        guard let dot = asset.lastIndex(of: "."), dot != asset.startIndex else { return false }
        return asset[..<dot] == string
    }

    /// `scheme:` at the start, RFC 3986: a letter, then letters, digits, `+`, `-`, `.`.
    static func hasScheme(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { hasScheme($0) }
    }

    /// The same on UTF-8 bytes (a byte past ASCII is no scheme character).
    private static func hasScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var sawLetter = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): sawLetter = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                guard sawLetter else { return false }
            case UInt8(ascii: ":"): return sawLetter
            default: return false
            }
        }
        return false
    }
}
