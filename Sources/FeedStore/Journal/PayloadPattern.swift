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
    public static let maxBytes = 1_024
    /// The largest number a pattern may hold (a bound such as `{3,8}`).
    public static let maxRepetition = 255

    /// Compiles `pattern`; throws a sentence saying why it cannot be used.
    public init(_ pattern: String) throws(ExpectationError) {
        self.pattern = pattern
        guard pattern.utf8.count <= Self.maxBytes else {
            throw ExpectationError("payloadMatches", "A pattern is at most \(Self.maxBytes) bytes.")
        }
        let bytes = Array(pattern.utf8)
        for (index, byte) in bytes.enumerated().dropLast()
        where byte == UInt8(ascii: "\\") && (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index + 1]) {
            throw ExpectationError(
                "payloadMatches",
                "'\(pattern)' has a back-reference; patterns are POSIX extended "
                    + "regular expressions without them.")
        }
        guard !bytes.contains(0) else { throw ExpectationError("payloadMatches", "A pattern holds no NUL byte.") }
        // A bound repetition compiles to that many copies: `(x{9999}){9999}` would take gigabytes.
        var bound: Int?  // the number being read inside `{…}`, nil outside one
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "{"): bound = 0
            case UInt8(ascii: "}"), UInt8(ascii: ","): bound = byte == UInt8(ascii: ",") && bound != nil ? 0 : nil
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let current = bound else { continue }
                bound = current * 10 + Int(byte - UInt8(ascii: "0"))
                guard (bound ?? 0) <= Self.maxRepetition else {
                    throw ExpectationError(
                        "payloadMatches", "'\(pattern)' repeats more than \(Self.maxRepetition) times in one bound.")
                }
            default: bound = nil
            }
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

    deinit { regfree(&regex) }

    /// Whether the pattern matches somewhere in `text` (a NUL in the text ends it, as in C).
    public func matches(_ text: String) -> Bool {
        regexec(&regex, text, 0, nil, 0) == 0
    }
}
