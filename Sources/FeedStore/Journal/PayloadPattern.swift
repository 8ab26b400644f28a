import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX extended regular expression (`regcomp` with `REG_EXTENDED`), for journal matchers.
///
/// glibc's matcher is not linear in every pattern: back-references, a repeated group that itself
/// repeats or alternates (`(a|aa)*`, `(a{9}){9}`), and long chains of bounded repeats
/// (`.{0,255}` eight times) take seconds and gigabytes on a few KiB of text. So a pattern is
/// refused unless, with every bound written out (`a{3}` is three atoms, `(ab){4}` eight), it has
/// at most `maxExpandedAtoms` atoms, no repetition of a repetition, no repeated group with a
/// repetition or alternation inside and no back-reference; applied to at most 4 KiB of text it
/// then costs at most about 7 ms (`.{0,255}~` on 4 KiB). glibc keeps the states it built in the compiled pattern, so the
/// pattern is compiled again every `recompileEvery` matches: what one verification keeps is bounded.
public final class PayloadPattern: Sendable {
    /// The compiled pattern, its matches since it was compiled, and whether it is compiled.
    private struct Compiled {
        var regex = regex_t()
        var uses = 0
        var usable = false
    }
    private let compiled = Lock(Compiled())
    /// The pattern as given.
    public let pattern: String

    /// The longest pattern accepted.
    public static let maxBytes = 256
    /// The largest number a pattern may hold (a bound such as `{3,8}`).
    public static let maxRepetition = 255
    /// The most atoms a pattern may have with its bounds written out.
    public static let maxExpandedAtoms = 256
    /// The longest text a pattern is applied to; a longer string does not match.
    public static let maxTextBytes = 4_096
    /// Matches between two compilations of the pattern.
    static let recompileEvery = 64

    /// Compiles `pattern`; throws a sentence saying why it cannot be used.
    public init(_ pattern: String) throws(ExpectationError) {
        self.pattern = pattern
        let bytes = Array(pattern.utf8)
        guard bytes.count <= Self.maxBytes else {
            throw ExpectationError("payloadMatches", "A pattern is at most \(Self.maxBytes) bytes.")
        }
        guard !bytes.contains(0) else { throw ExpectationError("payloadMatches", "A pattern holds no NUL byte.") }
        if let problem = PatternShape.problem(bytes) {
            throw ExpectationError("payloadMatches", "'\(pattern)' \(problem).")
        }
        let problem = compiled.withLock { state in
            let problem = Self.compile(pattern, into: &state.regex)
            state.usable = problem == nil
            return problem
        }
        if let problem {
            throw ExpectationError(
                "payloadMatches", "'\(pattern)' is not a POSIX extended regular expression: \(problem).")
        }
    }

    /// Compiles `pattern` into `regex`; glibc's message when it cannot (and `regex` is then free).
    private static func compile(_ pattern: String, into regex: inout regex_t) -> String? {
        let code = regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB)
        guard code != 0 else { return nil }
        var message = [CChar](repeating: 0, count: 256)
        regerror(code, &regex, &message, message.count)
        regfree(&regex)
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        compiled.withLock { state in
            if state.usable { regfree(&state.regex) }
        }
    }

    /// Whether the pattern matches somewhere in `text` (a NUL in the text ends it, as in C); false
    /// for a text over `maxTextBytes`.
    public func matches(_ text: String) -> Bool {
        guard text.utf8.count <= Self.maxTextBytes else { return false }
        return compiled.withLock { state in
            state.uses += 1
            if state.uses % Self.recompileEvery == 0, state.usable {
                // The same pattern again, without the states glibc kept from earlier matches.
                regfree(&state.regex)
                state.usable = Self.compile(pattern, into: &state.regex) == nil
            }
            return state.usable && regexec(&state.regex, text, 0, nil, 0) == 0
        }
    }
}
