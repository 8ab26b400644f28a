#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process environment as name/value pairs (read from `environ`, no Foundation needed).
public enum ProcessEnvironment {
    public static func pairs() -> [(String, String)] {
        var result: [(String, String)] = []
        var cursor = block()
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            }
            cursor += 1
        }
        return result
    }

    /// The C environment block (`NAME=value` strings, NULL-terminated): `environ` on Linux;
    /// Darwin does not export `environ` to Swift, `_NSGetEnviron()` gives the same block.
    static func block() -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        #if canImport(Darwin)
        return _NSGetEnviron().pointee!  // never NULL: the block exists from process start
        #else
        return environ
        #endif
    }
}
