/// What `JSONParser` builds as it reads a document: told of each value in document order, so
/// one grammar serves every form (a `JSONValue` tree, a `JSONDocument` of canonical bytes and a
/// tape, or nothing at all when only validity matters).
///
/// Containers are opened, told of each member or element as it starts and as it ends, then
/// closed; a member's name comes before its value is read.
protocol JSONBuilder {
    /// What one value becomes.
    associatedtype Value
    /// What an object or array accumulates while it is read.
    associatedtype Container

    /// A string's decoded UTF-8 bytes, and whether its literal had an escape (without one, the
    /// bytes between its quotes are already its canonical form).
    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Value
    /// A number's literal, as written.
    mutating func number(_ literal: UnsafeBufferPointer<UInt8>) -> Value
    /// `true` or `false`.
    mutating func bool(_ flag: Bool) -> Value
    /// `null`.
    mutating func null() -> Value

    /// An object begins.
    mutating func beginObject() -> Container
    /// A member called `name` (decoded UTF-8, `escaped` as for `string`) begins; its value is
    /// read next.
    mutating func beginMember(_ name: UnsafeBufferPointer<UInt8>, escaped: Bool, in object: inout Container)
    /// The member's value has been read.
    mutating func endMember(_ value: Value, in object: inout Container)
    /// The object ends.
    mutating func endObject(_ object: Container) -> Value

    /// An array begins.
    mutating func beginArray() -> Container
    /// An element begins; it is read next.
    mutating func beginElement(in array: inout Container)
    /// The element has been read.
    mutating func endElement(_ value: Value, in array: inout Container)
    /// The array ends.
    mutating func endArray(_ array: Container) -> Value
}

/// Builds `JSONValue` trees (small documents: requests, records, responses).
struct JSONTreeBuilder: JSONBuilder {
    /// A container being read: its members or elements, and a member's name until its value.
    enum Container {
        case object([JSONMember], pendingName: String)
        case array([JSONValue])
    }

    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> JSONValue {
        .string(String(decoding: bytes, as: UTF8.self))
    }

    mutating func number(_ literal: UnsafeBufferPointer<UInt8>) -> JSONValue {
        .number(String(decoding: literal, as: UTF8.self))
    }

    mutating func bool(_ flag: Bool) -> JSONValue { .bool(flag) }

    mutating func null() -> JSONValue { .null }

    mutating func beginObject() -> Container { .object([], pendingName: "") }

    mutating func beginMember(_ name: UnsafeBufferPointer<UInt8>, escaped: Bool, in object: inout Container) {
        guard case .object(let members, _) = object else { return }
        object = .object(members, pendingName: String(decoding: name, as: UTF8.self))
    }

    mutating func endMember(_ value: JSONValue, in object: inout Container) {
        guard case .object(var members, let name) = object else { return }
        object = .array([])  // releases the array, so the append below does not copy it
        members.append(JSONMember(name, value))
        object = .object(members, pendingName: "")
    }

    mutating func endObject(_ object: Container) -> JSONValue {
        guard case .object(let members, _) = object else { return .object([]) }
        return .object(members)
    }

    mutating func beginArray() -> Container { .array([]) }

    mutating func beginElement(in array: inout Container) {}

    mutating func endElement(_ value: JSONValue, in array: inout Container) {
        guard case .array(var elements) = array else { return }
        array = .array([])
        elements.append(value)
        array = .array(elements)
    }

    mutating func endArray(_ array: Container) -> JSONValue {
        guard case .array(let elements) = array else { return .array([]) }
        return .array(elements)
    }
}

/// Builds nothing: a document is checked and forgotten (whether a file parses).
struct JSONValidator: JSONBuilder {
    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) {}
    mutating func number(_ literal: UnsafeBufferPointer<UInt8>) {}
    mutating func bool(_ flag: Bool) {}
    mutating func null() {}
    mutating func beginObject() {}
    mutating func beginMember(_ name: UnsafeBufferPointer<UInt8>, escaped: Bool, in object: inout Void) {}
    mutating func endMember(_ value: Void, in object: inout Void) {}
    mutating func endObject(_ object: Void) {}
    mutating func beginArray() {}
    mutating func beginElement(in array: inout Void) {}
    mutating func endElement(_ value: Void, in array: inout Void) {}
    mutating func endArray(_ array: Void) {}
}
