#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX extended regular expression (`regcomp` with `REG_EXTENDED`), for journal matchers.
/// Back-references are refused: without them the C library matches in time proportional to
/// the text, so a pattern a client sends cannot wedge a thread.
public final class PayloadPattern: @unchecked Sendable {  // regexec on a compiled regex_t is thread-safe
    private var regex = regex_t()
    /// The pattern as given.
    public let pattern: String

    /// The longest pattern accepted.
    public static let maxBytes = 256
    /// The largest number a pattern may hold (a bound such as `{3,8}`).
    public static let maxRepetition = 255
    /// The longest text a pattern is applied to; a longer string does not match.
    public static let maxTextBytes = 4_096

    /// Compiles `pattern`; throws a sentence saying why it cannot be used. glibc's matcher is not
    /// linear in every case: a repeated group that itself repeats or alternates (`(a|aa)*`,
    /// `(a{9}){9}`) can take seconds and gigabytes, so such groups are refused, as are
    /// back-references, bounds over 255 and patterns over 256 bytes; with a text of at most
    /// 4 KiB, a match then costs little.
    public init(_ pattern: String) throws(ExpectationError) {
        self.pattern = pattern
        let bytes = Array(pattern.utf8)
        guard bytes.count <= Self.maxBytes else {
            throw ExpectationError("payloadMatches", "A pattern is at most \(Self.maxBytes) bytes.")
        }
        guard !bytes.contains(0) else { throw ExpectationError("payloadMatches", "A pattern holds no NUL byte.") }
        if let problem = Self.shapeProblem(bytes) {
            throw ExpectationError("payloadMatches", "'\(pattern)' \(problem).")
        }
        let code = regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB)
        guard code == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(code, &regex, &message, message.count)
            regfree(&regex)
            throw ExpectationError(
                "payloadMatches",
                "'\(pattern)' is not a POSIX extended regular expression: "
                    + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + ".")
        }
    }

    /// Why a pattern's shape is refused, nil when it is not: a back-reference, a bound over
    /// `maxRepetition`, a repetition of a repetition, or a repeated group that repeats or
    /// alternates inside.
    static func shapeProblem(_ bytes: [UInt8]) -> String? {
        // Per open group: whether it holds a repetition or an alternation, nested groups included.
        var groups: [Bool] = [false]
        var closed: Bool?  // the group just closed, while the next byte may repeat it
        var repeated = false  // whether the last token was a repetition (`x+`, `x{3}`)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let repeats =
                byte == UInt8(ascii: "*") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "?")
                || byte == UInt8(ascii: "{")
            if repeats {
                // `x++…{255}` stacks repetitions as nesting does: glibc compiles it to gigabytes.
                if repeated { return "repeats a repetition; write each repetition once" }
                repeated = true
                if closed == true {
                    return "repeats a group that repeats or alternates inside; write it without nesting"
                }
                groups[groups.count - 1] = true
                if byte == UInt8(ascii: "{"), let end = bytes[index...].firstIndex(of: UInt8(ascii: "}")) {
                    let bound = bytes[(index + 1)..<end].split(separator: UInt8(ascii: ","))
                    if bound.contains(where: {
                        Int(String(decoding: $0, as: UTF8.self)).map { $0 > maxRepetition } ?? false
                    }) {
                        return "repeats more than \(maxRepetition) times in one bound"
                    }
                    index = end
                }
                closed = nil
                index += 1
                continue
            }
            closed = nil
            repeated = false
            switch byte {
            case UInt8(ascii: "\\"):
                if index + 1 < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index + 1]) {
                    return "has a back-reference; patterns are POSIX extended regular expressions without them"
                }
                index += 1
            case UInt8(ascii: "["):
                // A bracket expression: `]` first (or after `^`) is a member, not its end.
                var end = index + 1
                if end < bytes.count, bytes[end] == UInt8(ascii: "^") { end += 1 }
                if end < bytes.count, bytes[end] == UInt8(ascii: "]") { end += 1 }
                while end < bytes.count, bytes[end] != UInt8(ascii: "]") { end += 1 }
                index = end
            case UInt8(ascii: "("): groups.append(false)
            case UInt8(ascii: ")") where groups.count > 1:
                let inner = groups.removeLast()
                closed = inner
                if inner { groups[groups.count - 1] = true }
            case UInt8(ascii: "|"): groups[groups.count - 1] = true
            default: break
            }
            index += 1
        }
        return nil
    }

    deinit { regfree(&regex) }

    /// Whether the pattern matches somewhere in `text` (a NUL in the text ends it, as in C); false
    /// for a text over `maxTextBytes`.
    public func matches(_ text: String) -> Bool {
        guard text.utf8.count <= Self.maxTextBytes else { return false }
        return regexec(&regex, text, 0, nil, 0) == 0
    }
}
