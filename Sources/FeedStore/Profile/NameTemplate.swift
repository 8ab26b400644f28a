/// An asset name built from an item's fields, WidgetBridge's own idiom: `{id}.jpg` is what
/// `feed.assetPath("${quote.id}.jpg")` looks up. Braces name members of the item; the rest is
/// literal text.
public struct NameTemplate: Sendable, Equatable {
    /// One piece of a template.
    public enum Part: Sendable, Equatable {
        /// Text copied as it is.
        case literal(String)
        /// The value of the item's member of this name.
        case field(String)
    }

    /// The template as written.
    public let text: String
    /// Its pieces, in order.
    public let parts: [Part]

    /// The fields it reads, in order.
    public var fields: [String] {
        parts.compactMap { part in
            if case .field(let name) = part { return name }
            return nil
        }
    }

    /// The longest name a template may build, in UTF-8 bytes: a file name's limit (`NAME_MAX`).
    public static let maxNameBytes = 255

    /// Parses `{id}.jpg`; throws a sentence naming what is wrong: an unclosed or stray brace, an
    /// empty field, no field at all, a `/` (asset names are single file names), a control
    /// character or any other character no asset name holds outside a field, or a template
    /// longer than a file name may be.
    public init(_ text: String) throws(ProfileError) {
        guard text.utf8.count <= Self.maxNameBytes else {
            throw ProfileError("image", "A name template is at most \(Self.maxNameBytes) bytes, as a file name is.")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ProfileError("image", "A name template has no control characters: no file name can hold them.")
        }
        var parts: [Part] = []
        var literal = ""
        var field: String?
        for character in text {
            switch (character, field) {
            case ("{", nil):
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = ""
                field = ""
            case ("}", let name?):
                guard !name.isEmpty else { throw ProfileError("image", "'\(text)' has an empty field '{}'.") }
                parts.append(.field(name))
                field = nil
            case ("{", _?), ("}", nil):
                throw ProfileError("image", "'\(text)' has a stray '\(character)'; a field is written {name}.")
            case (let other, let name?):
                field = name + String(other)
            case (let other, nil):
                guard other != "/" else {
                    throw ProfileError("image", "'\(text)' has a '/': an asset name is one file name, with no folder.")
                }
                guard other.utf8.count == 1, let byte = other.utf8.first, SafeName.isAllowed(byte) else {
                    throw ProfileError(
                        "image",
                        "'\(text)' has '\(other)', which no asset name holds (ASCII letters, digits, '-', '_' and '.'), "
                            + "so the name it builds can never be found.")
                }
                literal.append(other)
            }
        }
        guard field == nil else { throw ProfileError("image", "'\(text)' has a '{' that is never closed.") }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        guard parts.contains(where: { if case .field = $0 { true } else { false } }) else {
            throw ProfileError(
                "image",
                "'\(text)' names no item field: write the name the widget builds, such as {id}.jpg, or a pointer "
                    + "such as /photo.")
        }
        self.text = text
        self.parts = parts
    }

    /// A template made of `field` and then `suffix` (`{id}` + `.jpg`), for inference.
    init(field: String, suffix: String) {
        text = "{" + field + "}" + suffix
        parts = [.field(field), .literal(suffix)]
    }

    /// The name for `item`, or the first field it lacks: a field must be a string or an integer
    /// (what a widget would put into the name). A name past `maxNameBytes` is refused as soon as
    /// it gets there, so an item's long text never builds a long string.
    public func name(for item: JSONNode) -> Result<String, MissingField> {
        var name = ""
        for part in parts {
            switch part {
            case .literal(let text):
                name += text
            case .field(let field):
                guard let value = item.kind == .object ? item[field] : nil else { return .failure(MissingField(field)) }
                // Judged by its literal first (at most 6 bytes per character escaped), so a
                // megabyte of text is never decoded to be refused.
                guard value.compactBytes.count <= Self.maxNameBytes * 6 + 2 else {
                    return .failure(MissingField(field, tooLong: true))
                }
                if let string = value.stringValue {
                    name += string
                } else if let integer = value.integerValue {
                    name += String(integer)
                } else {
                    return .failure(MissingField(field))
                }
                if name.utf8.count > Self.maxNameBytes { return .failure(MissingField(field, tooLong: true)) }
            }
        }
        if name.utf8.count > Self.maxNameBytes, let last = fields.last {
            return .failure(MissingField(last, tooLong: true))
        }
        return .success(name)
    }

    /// A field an item lacks, or holds as something other than a string or an integer, or one
    /// whose value makes the name longer than a file name may be.
    public struct MissingField: Error, Equatable, Sendable {
        /// The field's name.
        public let field: String
        /// Whether the field is there but makes the name too long.
        public let tooLong: Bool
        init(_ field: String, tooLong: Bool = false) {
            self.field = field
            self.tooLong = tooLong
        }
    }
}
