/// The shape of a POSIX extended regular expression, read before glibc compiles it: what it would
/// cost to match, and why a pattern is refused (`PayloadPattern`). A recursive descent over ERE's
/// grammar (branches, pieces, atoms, bracket expressions with their `[:class:]`, `[=e=]` and
/// `[.c.]` members); syntax it cannot follow is left for `regcomp` to refuse.
struct PatternShape {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Why `bytes` is refused, nil when its shape is fine.
    static func problem(_ bytes: [UInt8]) -> String? {
        var shape = PatternShape(bytes: bytes)
        do throws(Refusal) {
            var atoms = 0
            while shape.index < bytes.count {
                atoms = atoms &+ (try shape.alternation()).atoms
                // An unmatched `)` at the top is a literal to glibc.
                if shape.index < bytes.count { shape.index += 1 }
            }
            guard atoms <= PayloadPattern.maxExpandedAtoms else {
                return "has \(atoms) atoms with its bounds written out, more than \(PayloadPattern.maxExpandedAtoms); "
                    + "write shorter bounds"
            }
            return nil
        } catch {
            return error.reason
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private struct Refusal: Error {
        let reason: String
    }

    /// Atoms with bounds written out, and whether it repeats or alternates anywhere inside.
    private struct Part {
        var atoms = 0
        var complex = false
    }

    private static let limit = PayloadPattern.maxExpandedAtoms + 1

    /// branch ('|' branch)*, up to a `)` closing the group it is in (or the end).
    private mutating func alternation() throws(Refusal) -> Part {
        var whole = Part()
        while true {
            let branch = try self.branch()
            whole.atoms = min(Self.limit, whole.atoms &+ branch.atoms)
            whole.complex = whole.complex || branch.complex
            guard index < bytes.count, bytes[index] == UInt8(ascii: "|") else { return whole }
            whole.complex = true
            index += 1
        }
    }

    /// piece*, up to a `|`, a closing `)` or the end.
    private mutating func branch() throws(Refusal) -> Part {
        var whole = Part()
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "|") || (byte == UInt8(ascii: ")") && depth > 0) { break }
            let piece = try self.piece()
            whole.atoms = min(Self.limit, whole.atoms &+ piece.atoms)
            whole.complex = whole.complex || piece.complex
        }
        return whole
    }

    /// atom, then at most one repetition.
    private mutating func piece() throws(Refusal) -> Part {
        var part = try atom()
        guard let times = try repetition() else { return part }
        if part.complex {
            throw Refusal(reason: "repeats a group that repeats or alternates inside; write it without nesting")
        }
        if try repetition() != nil {
            throw Refusal(reason: "repeats a repetition; write each repetition once")
        }
        part.atoms = min(Self.limit, part.atoms &* max(1, times))
        part.complex = true
        return part
    }

    /// A group, a bracket expression, an escape or one character.
    private mutating func atom() throws(Refusal) -> Part {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "("):
            depth += 1
            let inner = try alternation()
            depth -= 1
            if index < bytes.count { index += 1 }  // its `)`
            return inner
        case UInt8(ascii: "["):
            skipBracket()
        case UInt8(ascii: "\\"):
            if index < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
                throw Refusal(
                    reason: "has a back-reference; patterns are POSIX extended regular expressions without them")
            }
            if index < bytes.count { index += 1 }
        default:
            break
        }
        return Part(atoms: 1, complex: false)
    }

    /// The repetition at `index` (`*`, `+`, `?`: 1; `{m}`: m; `{m,}`: m + 1; `{m,n}`: n; glibc
    /// reads `{,n}` as `{0,n}`), nil when none. A `{` followed by neither a digit nor a comma is a
    /// character.
    private mutating func repetition() throws(Refusal) -> Int? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "?"):
            index += 1
            return 1
        case UInt8(ascii: "{")
        where index + 1 < bytes.count && (Self.isDigit(bytes[index + 1]) || bytes[index + 1] == UInt8(ascii: ",")):
            index += 1
            let low = number()
            var high = low
            if index < bytes.count, bytes[index] == UInt8(ascii: ",") {
                index += 1
                high = index < bytes.count && Self.isDigit(bytes[index]) ? number() : low &+ 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1 }
            guard low <= PayloadPattern.maxRepetition, high <= PayloadPattern.maxRepetition + 1 else {
                throw Refusal(reason: "repeats more than \(PayloadPattern.maxRepetition) times in one bound")
            }
            return max(low, high)
        default:
            return nil
        }
    }

    /// Digits at `index`, saturating well above any bound allowed.
    private mutating func number() -> Int {
        var value = 0
        while index < bytes.count, Self.isDigit(bytes[index]) {
            value = min(100_000, value * 10 + Int(bytes[index] - UInt8(ascii: "0")))
            index += 1
        }
        return value
    }

    /// Past a bracket expression's `]`: a `]` first (or after `^`) is a member, and so is any
    /// byte inside `[:…:]`, `[=…=]` and `[.….]` (`[[.].])]` is one bracket holding `]` and `)`).
    private mutating func skipBracket() {
        if index < bytes.count, bytes[index] == UInt8(ascii: "^") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1 }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "]") {
                index += 1
                return
            }
            if byte == UInt8(ascii: "["), index + 1 < bytes.count,
                let kind = [UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: ".")].first(where: {
                    $0 == bytes[index + 1]
                })
            {
                // To the matching `kind]`; unterminated, the rest is the bracket's (regcomp refuses it).
                var end = index + 2
                while end + 1 < bytes.count, !(bytes[end] == kind && bytes[end + 1] == UInt8(ascii: "]")) { end += 1 }
                index = end + 2
                continue
            }
            index += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
