/// A JSON document kept as its canonical compact bytes and a tape of its values, read on demand
/// through `JSONNode`s.
///
/// What the store needs of a payload (member order, exact number literals, the canonical form
/// the fingerprint is computed over) in the bytes themselves plus 8 bytes per value: a tree of
/// `JSONValue`s costs several times that, a box, a string and an array slot per value, which for
/// a 16 MiB payload of short values is hundreds of megabytes. Any value's canonical bytes are a
/// contiguous slice of `bytes`.
public struct JSONDocument: Sendable {
    /// The canonical compact form (feed format v1) of the whole document.
    public let bytes: [UInt8]
    /// One entry per value (member names included), in document order.
    let tape: [TapeEntry]

    /// The largest document a tape can describe (a value's length has 29 bits).
    public static let maxBytes = (1 << 29) - 1

    /// Parses `input` strictly (the rules of `JSONParser`) into its canonical bytes and tape.
    public static func parse<Bytes: Collection>(
        _ input: Bytes, limits: JSONLimits = JSONLimits()
    ) throws(JSONParseError) -> JSONDocument
    where Bytes.Element == UInt8 {
        var bounded = limits
        bounded.maxBytes = min(limits.maxBytes, maxBytes)
        let capacity = input.count
        let builder = try JSONParser.read(input, limits: bounded) { JSONDocumentBuilder(capacity: capacity) }.builder
        return JSONDocument(bytes: builder.output, tape: builder.tape)
    }

    /// A document over bytes already in canonical form (a stored payload), sharing them: only
    /// the tape is new. Bytes that are not canonical are parsed into a copy that is.
    public init(canonical bytes: [UInt8]) throws(JSONParseError) {
        let parsed = try Self.parse(bytes, limits: JSONLimits(maxDepth: .max, maxBytes: Self.maxBytes))
        self.init(bytes: parsed.bytes == bytes ? bytes : parsed.bytes, tape: parsed.tape)
    }

    init(bytes: [UInt8], tape: [TapeEntry]) {
        self.bytes = bytes
        self.tape = tape
    }

    /// The document `null`, for a payload that cannot be read.
    public static let null = JSONDocument(
        bytes: Array("null".utf8), tape: [TapeEntry(kind: .null, start: 0, length: 4)])

    /// The document's root value.
    public var root: JSONNode { JSONNode(document: self, index: 0) }

    /// The value at a tape position that `JSONNode.elementPositions` gave for this document.
    public func node(atTapePosition position: UInt32) -> JSONNode? {
        Int(position) < tape.count ? JSONNode(document: self, index: Int(position)) : nil
    }

    /// Bytes held, for caches that bound their memory.
    public var footprint: Int { bytes.count + tape.count * MemoryLayout<TapeEntry>.stride }

    /// The index of the first entry after the value at `index` and everything inside it.
    func end(of index: Int) -> Int {
        let entry = tape[index]
        guard entry.kind == .object || entry.kind == .array else { return index + 1 }
        // Entries are in document order, so the first one starting at or after this value's end
        // is the next one outside it.
        let limit = Int(entry.start) + Int(entry.length)
        var low = index + 1
        var high = tape.count
        while low < high {
            let middle = (low + high) / 2
            if Int(tape[middle].start) < limit { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// One value of a `JSONDocument`: where its canonical bytes start, how long they are, its kind.
struct TapeEntry: Sendable {
    /// The kinds of value.
    enum Kind: UInt32, Sendable {
        case object, array, string, number, `true`, `false`, null
    }

    /// Offset of its first byte in the document's canonical bytes.
    var start: UInt32
    /// Kind (top 3 bits) and length (low 29 bits).
    private var packed: UInt32

    init(kind: Kind, start: Int, length: Int) {
        self.start = UInt32(truncatingIfNeeded: start)
        packed = kind.rawValue << 29 | UInt32(truncatingIfNeeded: length) & Self.lengthMask
    }

    private static let lengthMask: UInt32 = (1 << 29) - 1

    /// What it is.
    var kind: Kind { Kind(rawValue: packed >> 29) ?? .null }

    /// Its canonical bytes' length.
    var length: UInt32 {
        get { packed & Self.lengthMask }
        set { packed = packed & ~Self.lengthMask | newValue & Self.lengthMask }
    }
}

/// Writes the canonical compact form and the tape as the grammar reads a document.
struct JSONDocumentBuilder: JSONBuilder {
    /// The canonical bytes so far.
    private(set) var output: [UInt8] = []
    /// The tape so far.
    private(set) var tape: [TapeEntry] = []

    /// A container being read: its tape entry and whether a member or element came already.
    struct Container {
        var entry: Int
        var hasContent: Bool
    }

    init(capacity: Int) {
        // Canonical bytes are never longer than the input (escapes only get shorter), and every
        // value but the last takes at least two of its bytes (itself and a separator): both sized
        // once for the most they can hold, so neither is ever copied into a buffer twice its size.
        // Pages of the tape no value reaches are never touched, so they cost address space only.
        output.reserveCapacity(capacity)
        tape.reserveCapacity(capacity / 2 + 1)
    }

    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        let start = output.count
        if escaped {
            CompactJSON.writeString(bytes: bytes, to: &output)
        } else {
            // Unescaped, a literal holds no control, quote or backslash: nothing to escape.
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: bytes)
            output.append(UInt8(ascii: "\""))
        }
        tape.append(TapeEntry(kind: .string, start: start, length: output.count - start))
    }

    mutating func number(_ literal: UnsafeBufferPointer<UInt8>) {
        scalar(.number, literal)
    }

    mutating func bool(_ flag: Bool) {
        flag ? scalar(.true, Self.trueBytes) : scalar(.false, Self.falseBytes)
    }

    mutating func null() { scalar(.null, Self.nullBytes) }

    private static let trueBytes: StaticString = "true"
    private static let falseBytes: StaticString = "false"
    private static let nullBytes: StaticString = "null"

    private mutating func scalar(_ kind: TapeEntry.Kind, _ text: StaticString) {
        scalar(kind, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func scalar(_ kind: TapeEntry.Kind, _ bytes: UnsafeBufferPointer<UInt8>) {
        tape.append(TapeEntry(kind: kind, start: output.count, length: bytes.count))
        output.append(contentsOf: bytes)
    }

    mutating func beginObject() -> Container { open(.object, UInt8(ascii: "{")) }

    mutating func beginMember(_ name: UnsafeBufferPointer<UInt8>, escaped: Bool, in object: inout Container) {
        separate(&object)
        string(name, escaped: escaped)
        output.append(UInt8(ascii: ":"))
    }

    mutating func endMember(_ value: Void, in object: inout Container) {}

    mutating func endObject(_ object: Container) { close(object, UInt8(ascii: "}")) }

    mutating func beginArray() -> Container { open(.array, UInt8(ascii: "[")) }

    mutating func beginElement(in array: inout Container) { separate(&array) }

    mutating func endElement(_ value: Void, in array: inout Container) {}

    mutating func endArray(_ array: Container) { close(array, UInt8(ascii: "]")) }

    private mutating func open(_ kind: TapeEntry.Kind, _ bracket: UInt8) -> Container {
        tape.append(TapeEntry(kind: kind, start: output.count, length: 0))
        output.append(bracket)
        return Container(entry: tape.count - 1, hasContent: false)
    }

    private mutating func separate(_ container: inout Container) {
        if container.hasContent { output.append(UInt8(ascii: ",")) }
        container.hasContent = true
    }

    private mutating func close(_ container: Container, _ bracket: UInt8) {
        output.append(bracket)
        tape[container.entry].length = UInt32(truncatingIfNeeded: output.count - Int(tape[container.entry].start))
    }
}
