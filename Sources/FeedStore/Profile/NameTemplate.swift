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

    /// Parses `{id}.jpg`; throws a sentence naming what is wrong: an unclosed or stray brace, an
    /// empty field, no field at all, or a `/` (asset names are single file names).
    public init(_ text: String) throws(ProfileError) {
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
    /// (what a widget would put into the name).
    public func name(for item: JSONNode) -> Result<String, MissingField> {
        var name = ""
        for part in parts {
            switch part {
            case .literal(let text):
                name += text
            case .field(let field):
                guard let value = item.kind == .object ? item[field] : nil else { return .failure(MissingField(field)) }
                if let string = value.stringValue {
                    name += string
                } else if let integer = value.integerValue {
                    name += String(integer)
                } else {
                    return .failure(MissingField(field))
                }
            }
        }
        return .success(name)
    }

    /// A field an item lacks, or holds as something other than a string or an integer.
    public struct MissingField: Error, Equatable, Sendable {
        /// The field's name.
        public let field: String
        init(_ field: String) { self.field = field }
    }
}
