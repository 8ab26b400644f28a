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
        // An ASCII string's Characters are its bytes (CR LF, the one ASCII cluster, holds no
        // separator), so every payload string of that kind is read in place. In others a
        // combining mark or joiner after a `/`, `?` or `#` makes it no separator.
        var bytes = string
        let ascii: Reading?? = bytes.withUTF8 { bytes in
            ByteScan.isASCII(bytes) ? .some(readASCII(bytes)) : .none
        }
        return ascii ?? readCharacters(string)
    }

    /// `read` for a string of ASCII bytes.
    private static func readASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Reading? {
        let isURL = hasScheme(bytes)
        var path = bytes
        if isURL, let end = ByteScan.firstOffset(of: UInt8(ascii: "?"), or: UInt8(ascii: "#"), in: path) {
            path = UnsafeBufferPointer(rebasing: path[..<end])
        }
        // Most payload strings are not file names: decide on the last bytes before splitting.
        guard hasImageExtension(path) else { return nil }
        let fileName =
            ByteScan.lastOffset(of: UInt8(ascii: "/"), in: path).map {
                UnsafeBufferPointer(rebasing: path[($0 + 1)...])
            }
            ?? path
        guard hasImageExtension(fileName) else { return nil }
        return Reading(fileName: String(decoding: fileName, as: UTF8.self), isURL: isURL)
    }

    /// `read` for any string, split at Characters.
    private static func readCharacters(_ string: String) -> Reading? {
        let isURL = hasScheme(string)
        var path = Substring(string)
        if isURL, let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard hasImageExtension(path.utf8) else { return nil }
        let fileName = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path
        guard hasImageExtension(fileName.utf8) else { return nil }
        return Reading(fileName: String(fileName), isURL: isURL)
    }

    /// Whether `read` may find an image in these UTF-8 bytes: they end in an image extension, or
    /// have a `?` or `#` that a URL's query or fragment would be cut at. False means it finds none.
    static func mayName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        hasImageExtension(bytes) || ByteScan.firstOffset(of: UInt8(ascii: "?"), or: UInt8(ascii: "#"), in: bytes) != nil
    }

    /// Whether the bytes end, ASCII case-insensitively, in one of `imageExtensions` with
    /// something before it.
    ///
    /// The answer comes from one word: the last bytes (one more than the longest extension),
    /// each ORed with 0x20 (ASCII lower case) and packed last-first, masked to each extension's
    /// length.
    static func hasImageExtension<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        var tail: UInt64 = 0
        var count = 0
        var index = bytes.endIndex
        while count < tailWindow, index > bytes.startIndex {
            index = bytes.index(before: index)
            tail |= UInt64(bytes[index] | 0x20) << (8 * count)
            count += 1
        }
        // Most strings have no dot near their end: one word test answers them.
        guard ByteScan.hasByte(UInt8(ascii: "."), in: tail & ~0xFF) else { return false }
        return packedExtensions.contains { $0.length < count && tail & $0.mask == $0.packed }
    }

    /// How many last bytes `hasImageExtension` reads: enough to see a byte before the longest
    /// extension, at most the eight of one word.
    private static let tailWindow: Int = {
        let window = (imageExtensions.map(\.utf8.count).max() ?? 0) + 1
        precondition(window <= 8, "an image extension longer than seven bytes does not fit one word")
        return window
    }()

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
