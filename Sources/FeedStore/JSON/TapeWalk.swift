/// A walk over the strings of a document (values and member names) in document order, read off
/// the tape in one pass: no recursion, and no search for where a container ends.
///
/// Tape entries come in document order and a container's entry spans every value inside it, so
/// the containers open at an entry are those whose span it starts in; an object's children
/// alternate name and value.
struct TapeWalk {
    /// A container open where the walk is.
    private struct Level {
        /// Where its canonical bytes end.
        let end: Int
        /// Whether it is an object (else an array).
        let isObject: Bool
        /// Entries read directly inside it: an object's names and values, an array's elements.
        var children = 0
        /// The tape index of the object's latest member name.
        var name = 0
    }

    private let document: JSONDocument
    private var next: Int
    private let stop: Int
    private var levels: [Level] = []

    /// A walk over `value` and everything inside it; pointers are relative to it.
    init(_ value: JSONNode) {
        document = value.document
        next = value.index
        stop = value.document.end(of: value.index)
    }

    /// The tape index of the next string, and whether it is a member name; nil at the end.
    mutating func nextString() -> (index: Int, isMemberName: Bool)? {
        while next < stop {
            let index = next
            next += 1
            let entry = document.tape[index]
            let start = Int(entry.start)
            while let last = levels.last, last.end <= start { levels.removeLast() }
            let isMemberName = countChild(at: index)
            switch entry.kind {
            case .object, .array:
                levels.append(Level(end: start + Int(entry.length), isObject: entry.kind == .object))
            case .string:
                return (index, isMemberName)
            case .number, .true, .false, .null:
                continue
            }
        }
        return nil
    }

    /// Counts the entry at `index` as a child of the innermost open container; whether it is a
    /// member name there.
    private mutating func countChild(at index: Int) -> Bool {
        guard !levels.isEmpty else { return false }
        let top = levels.count - 1
        defer { levels[top].children += 1 }
        guard levels[top].isObject, levels[top].children % 2 == 0 else { return false }
        levels[top].name = index
        return true
    }

    /// Where the latest string lies, as an RFC 6901 JSON Pointer (a member name's own member
    /// included).
    var pointer: String {
        levels.map { level in
            guard level.isObject else { return "/\(level.children - 1)" }
            return "/" + Self.escape(JSONNode(document: document, index: level.name).stringValue ?? "")
        }.joined()
    }

    /// RFC 6901: `~` → `~0`, `/` → `~1`.
    private static func escape(_ token: String) -> String {
        guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
        var result = ""
        for character in token {
            switch character {
            case "~": result += "~0"
            case "/": result += "~1"
            default: result.append(character)
            }
        }
        return result
    }
}
