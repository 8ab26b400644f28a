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
        let isURL = hasScheme(string)
        var path = Substring(string)
        if isURL, let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        // Most payload strings are not file names: decide on the last bytes before splitting.
        guard hasImageExtension(path.utf8) else { return nil }
        let fileName = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path
        guard hasImageExtension(fileName.utf8) else { return nil }
        return Reading(fileName: String(fileName), isURL: isURL)
    }

    /// Whether the bytes end, ASCII case-insensitively, in one of `imageExtensions` with
    /// something before it.
    private static func hasImageExtension(_ bytes: Substring.UTF8View) -> Bool {
        imageExtensions.contains { suffix in
            let suffixBytes = suffix.utf8
            guard bytes.count > suffixBytes.count else { return false }
            return zip(bytes.suffix(suffixBytes.count), suffixBytes).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
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
        var sawLetter = false
        for scalar in string.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z": sawLetter = true
            case "0"..."9", "+", "-", ".": guard sawLetter else { return false }
            case ":": return sawLetter
            default: return false
            }
        }
        return false
    }
}
