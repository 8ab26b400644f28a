/// A profile applied to one payload: what the widget's own code would look up for an item
/// (its title, subtitle and image name) and for no items at all (the empty-state text).
public struct WidgetItems: Sendable {
    /// The profile applied.
    public let profile: WidgetProfile
    /// The payload's items array; nil when `profile.items` names no array.
    public let array: JSONNode?
    /// The payload's root.
    public let payload: JSONNode

    /// The profile over `payload`.
    public init(profile: WidgetProfile, payload: JSONNode) {
        self.profile = profile
        self.payload = payload
        let found = profile.items.pointer.resolve(in: payload)
        array = found?.kind == .array ? found : nil
    }

    /// What an item shows.
    public struct Item: Sendable, Equatable {
        /// Where the item is in the payload (RFC 6901).
        public var pointer: String
        /// The title's text; nil when the profile names none or the item has none.
        public var title: String?
        /// The subtitle's text, likewise.
        public var subtitle: String?
        /// Its image.
        public var image: Image
    }

    /// An item's image as the widget would look it up.
    public enum Image: Sendable, Equatable {
        /// The profile names no image.
        case notDescribed
        /// The asset file name the widget asks for (`feed.assetPath(name)`).
        case asset(String)
        /// A URL with a scheme: the app fetches those itself, so it is never an asset.
        case url(String)
        /// No name can be made: the sentence says why (the item lacks the field).
        case unnamed(String)
    }

    /// What the item `node` at `index` of the array shows.
    public func item(_ node: JSONNode, index: Int) -> Item {
        Item(
            pointer: profile.items.text + "/\(index)",
            title: profile.title.flatMap { Self.text(at: $0, in: node) },
            subtitle: profile.subtitle.flatMap { Self.text(at: $0, in: node) },
            image: image(of: node))
    }

    /// The empty-state text: the string `profile.empty` names; nil when there is none.
    public var emptyText: String? {
        profile.empty.flatMap { Self.text(at: $0, in: payload) }
    }

    /// A string, or a number's literal, at `pointer` below `node`; nil for anything else and
    /// for an empty string (a widget shows nothing for it).
    static func text(at pointer: WidgetProfile.Pointer, in node: JSONNode) -> String? {
        guard let value = pointer.pointer.resolve(in: node) else { return nil }
        let text = value.stringValue ?? value.numberLiteral
        return text?.isEmpty == false ? text : nil
    }

    /// Whether `text(at:in:)` finds a text, read without decoding it: a number's literal is never
    /// empty, and an empty string's canonical literal is its two quotes.
    static func hasText(at pointer: WidgetProfile.Pointer, in node: JSONNode) -> Bool {
        guard let value = pointer.pointer.resolve(in: node) else { return false }
        switch value.kind {
        case .string: return value.compactBytes.count > 2
        case .number: return true
        default: return false
        }
    }

    /// The image of the item `node`, as the widget would look it up.
    func image(of node: JSONNode) -> Image {
        switch profile.image {
        case nil:
            return .notDescribed
        case .template(let template):
            switch template.name(for: node) {
            case .success(let name) where !SafeName.isSafe(name):
                return .unnamed("makes '\(name.prefix(64))' with \(template.text), which no asset name can be")
            case .success(let name): return .asset(name)
            case .failure(let missing) where missing.tooLong:
                return .unnamed(
                    "has a '\(missing.field)' that makes \(template.text) longer than a file name may be "
                        + "(\(NameTemplate.maxNameBytes) bytes), so it names no file")
            case .failure(let missing):
                return .unnamed("has no string or integer '\(missing.field)', so \(template.text) names no file")
            }
        case .pointer(let pointer):
            guard let string = pointer.pointer.resolve(in: node)?.stringValue, !string.isEmpty else {
                return .unnamed("has no string at \(pointer.text), so it names no image file")
            }
            let image = Self.image(named: string)
            if case .url(let address) = image, !Self.isFetchable(address) {
                return .unnamed(
                    "has '\(address.prefix(40))' at \(pointer.text): neither an asset name nor an http(s) URL the "
                        + "app could fetch, so it names no image file")
            }
            if case .asset(let name) = image, name.utf8.count > NameTemplate.maxNameBytes {
                return .unnamed(
                    "has a string at \(pointer.text) longer than a file name may be "
                        + "(\(NameTemplate.maxNameBytes) bytes), so it names no image file")
            }
            if case .asset(let name) = image, !SafeName.isSafe(name) {
                return .unnamed(
                    "has '\(name.prefix(64))' at \(pointer.text), which no asset name can be (ASCII letters, digits, "
                        + "'-', '_' and '.'), so it names no image file")
            }
            return image
        }
    }

    /// Whether a URL is one an app fetches images from: `http://` or `https://` (any case) and a
    /// host. Other schemes (`file:`, `data:`, `javascript:`) and hostless forms (`http:x.jpg`) name
    /// nothing a widget's asset lookup finds, nor anything an app can fetch.
    static func isFetchable(_ address: String) -> Bool {
        let lowered = address.lowercased()
        guard let rest = ["http://", "https://"].first(where: lowered.hasPrefix).map({ lowered.dropFirst($0.count) })
        else { return false }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !host.isEmpty && !host.contains("\\") && !host.contains(" ")
    }

    /// The file a string names: an image reference's file name (`photos/q1.jpg` → `q1.jpg`), a
    /// URL's as a URL, and any other string as it is (the widget passes it to `assetPath`).
    static func image(named string: String) -> Image {
        if let reading = ImageReference.read(string) {
            return reading.isURL ? .url(string) : .asset(reading.fileName)
        }
        return ImageReference.hasScheme(string) ? .url(string) : .asset(string)
    }
}
