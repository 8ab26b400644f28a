/// How a widget reads its feed: where the items are, which of each item's fields it shows, the
/// image it looks up for an item, its empty-state text and its time zone. Stored per group as
/// `profile.json`, outside what WidgetBridge's readers read; only `items` is required.
public struct WidgetProfile: Sendable, Equatable {
    /// The items array (JSON Pointer into the payload, `/quotes`).
    public var items: Pointer
    /// The title, relative to an item (`/text`).
    public var title: Pointer?
    /// The subtitle, relative to an item.
    public var subtitle: Pointer?
    /// The image an item shows.
    public var image: ImageRule?
    /// The text shown when there are no items (JSON Pointer into the payload).
    public var empty: Pointer?
    /// The zone the widget's hours are counted in: an IANA name or `+HH:MM` (`±HH:MM:SS` with seconds).
    public var zone: String?

    /// The largest profile accepted, as sent and as stored (`fileBytes`, a newline included).
    public static let maxBytes = 16 << 10
    /// The members a profile may have, in the order it is written.
    public static let memberNames = ["items", "title", "subtitle", "image", "empty", "zone"]

    /// A JSON Pointer with the text it was written as.
    public struct Pointer: Sendable, Equatable {
        /// As written (`/quotes`).
        public let text: String
        /// Parsed.
        public let pointer: JSONPointer

        /// Parses `text`; throws naming `member` when it is not a JSON Pointer.
        public init(_ text: String, member: String) throws(ProfileError) {
            guard let pointer = JSONPointer(text) else {
                let why =
                    text.utf8.first == UInt8(ascii: "/")
                    ? "a '~' in it is not followed by 0 (for '~') or 1 (for '/')"
                    : "it starts with '/', such as /quotes, or is \"\" for the whole value"
                throw ProfileError(member, "'\(text)' is not a JSON Pointer (RFC 6901): \(why).")
            }
            self.text = text
            self.pointer = pointer
        }

        /// `""`: the whole value.
        public static let whole = Pointer(text: "", pointer: JSONPointer(tokens: []))

        private init(text: String, pointer: JSONPointer) {
            self.text = text
            self.pointer = pointer
        }
    }

    /// How an item's image is named.
    public enum ImageRule: Sendable, Equatable {
        /// The item's string at this pointer is the file name (or a path or URL ending in it).
        case pointer(Pointer)
        /// The name is built from the item's fields.
        case template(NameTemplate)

        /// As written.
        public var text: String {
            switch self {
            case .pointer(let pointer): return pointer.text
            case .template(let template): return template.text
            }
        }

        /// A pointer when `text` starts with `/`, a name template otherwise.
        public init(_ text: String) throws(ProfileError) {
            if text.hasPrefix("/") {
                self = .pointer(try Pointer(text, member: "image"))
            } else {
                self = .template(try NameTemplate(text))
            }
        }
    }

    /// A profile of these parts; only `items` is required.
    public init(
        items: Pointer, title: Pointer? = nil, subtitle: Pointer? = nil, image: ImageRule? = nil,
        empty: Pointer? = nil, zone: String? = nil
    ) {
        self.items = items
        self.title = title
        self.subtitle = subtitle
        self.image = image
        self.empty = empty
        self.zone = zone
    }

    /// Reads a profile from JSON: an object of strings with only the known members, `items`
    /// among them; each error names the member.
    public init(json bytes: [UInt8]) throws(ProfileError) {
        guard bytes.count <= Self.maxBytes else {
            throw ProfileError("", "A profile is at most \(Self.maxBytes) bytes (got \(bytes.count)).")
        }
        let root: JSONNode
        do { root = try JSONDocument.parse(bytes, limits: JSONLimits(maxDepth: 4, maxBytes: Self.maxBytes)).root } catch
        {
            throw ProfileError("", "The profile is not JSON: \(error).")
        }
        guard root.kind == .object else {
            throw ProfileError("", "A profile is a JSON object such as {\"items\":\"/quotes\",\"title\":\"/text\"}.")
        }
        var strings: [String: String] = [:]
        for (name, value) in root.members {
            guard Self.memberNames.contains(name) else {
                throw ProfileError(
                    name, "'\(name)' is not a profile member; they are \(Self.memberNames.joined(separator: ", ")).")
            }
            guard let string = value.stringValue else { throw ProfileError(name, "'\(name)' must be a string.") }
            strings[name] = string
        }
        try self.init(strings: strings)
        // What is stored must read back: its compact form and a newline within the same bound.
        let stored = fileBytes.count
        guard stored <= Self.maxBytes else {
            throw ProfileError(
                "", "Stored, the profile would take \(stored) bytes; a profile is at most \(Self.maxBytes).")
        }
    }

    /// A profile from member texts (a stored profile, or a timeline's query parameters).
    public init(strings: [String: String]) throws(ProfileError) {
        guard let items = strings["items"] else {
            throw ProfileError("items", "'items' is required: a JSON Pointer to the items array, such as /quotes.")
        }
        self.items = try Pointer(items, member: "items")
        title = try strings["title"].map { text throws(ProfileError) in try Pointer(text, member: "title") }
        subtitle = try strings["subtitle"].map { text throws(ProfileError) in try Pointer(text, member: "subtitle") }
        image = try strings["image"].map { text throws(ProfileError) in try ImageRule(text) }
        empty = try strings["empty"].map { text throws(ProfileError) in try Pointer(text, member: "empty") }
        if let zone = strings["zone"] {
            guard Self.zoneRules(zone) != nil else {
                throw ProfileError(
                    "zone",
                    "'\(zone)' is neither an IANA time zone known to this system (such as Europe/Berlin) nor an "
                        + "offset such as +05:30 or +05:30:15 (at most 18 hours either way).")
            }
            self.zone = zone
        }
    }

    /// The member texts, in `memberNames` order.
    public var strings: [(name: String, text: String)] {
        let texts = [items.text, title?.text, subtitle?.text, image?.text, empty?.text, zone]
        return zip(Self.memberNames, texts).compactMap { name, text in text.map { (name, $0) } }
    }

    /// The profile as a JSON object, members in `memberNames` order.
    public var json: JSONValue { .object(strings.map { JSONMember($0.name, .string($0.text)) }) }

    /// What `profile.json` holds: the compact JSON object and a newline.
    public var fileBytes: [UInt8] { CompactJSON.bytes(json) + [0x0A] }

    /// The rules of an IANA zone name or an `±HH:MM[:SS]` offset; nil when it is neither.
    public static func zoneRules(_ text: String) -> ZoneRules? {
        if let offset = ZoneRules.parseOffset(text) { return ZoneRules(fixedOffsetSeconds: offset) }
        return ZoneRules(named: text)
    }
}

/// Why a JSON document a client sends (a widget profile, a journal expectation) is refused: the
/// member concerned (`""` for the whole) and a sentence saying what is wrong.
public struct MemberError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The member concerned, `""` for the document as a whole.
    public let member: String
    /// What is wrong and how to write it.
    public let detail: String

    /// An error about `member`.
    public init(_ member: String, _ detail: String) {
        self.member = member
        self.detail = detail
    }

    /// The detail.
    public var description: String { detail }
}

/// Why a profile is refused.
public typealias ProfileError = MemberError
