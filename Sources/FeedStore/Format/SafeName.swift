#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The safe-name rule of feed format v1, for group names, generation ids and asset names.
///
/// 1 to 128 characters from ASCII letters, digits, `-`, `_` and `.`, never `.` or `..`.
/// Stricter than either WidgetBridge reader on purpose (see docs/feed-format.md).
public enum SafeName {
    /// The longest name accepted.
    public static let maxLength = 128

    /// Whether `name` is a safe name.
    public static func isSafe(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isSafe(bytes: $0) }
    }

    /// Whether a name's bytes, read in place, are a safe name.
    public static func isSafe(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard (1...maxLength).contains(bytes.count), !isDotSegment(bytes) else { return false }
        return bytes.allSatisfy(isAllowed)
    }

    /// Whether a name's bytes, read in place, can name a group (the cached read's check).
    public static func isGroupName(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard isSafe(bytes: bytes) else { return false }
        guard bytes.count >= reservedPrefixBytes.count, let start = bytes.baseAddress else { return true }
        return reservedPrefixBytes.withUnsafeBufferPointer { prefix in
            // memcmp: the generic `starts(with:)` walks two iterators, several times the cost.
            memcmp(start, prefix.baseAddress!, prefix.count) != 0
        }
    }

    private static let reservedPrefixBytes = Array(reservedGroupPrefix.utf8)

    private static func isDotSegment(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        switch bytes.count {
        case 1: return bytes[0] == dot
        case 2: return bytes[0] == dot && bytes[1] == dot
        default: return false
        }
    }

    /// Why `name` is not safe, or nil when it is.
    public static func problem(with name: String) -> String? {
        let count = name.utf8.count
        if count == 0 { return "is empty" }
        if count > maxLength { return "is longer than \(maxLength) bytes" }
        if name == "." || name == ".." { return "is a dot segment" }
        if !name.utf8.allSatisfy(isAllowed) {
            return "may contain only ASCII letters, digits, '-', '_' and '.'"
        }
        return nil
    }

    /// Names under the root the server keeps for itself (`.feed-server-uploads`,
    /// `.feed-server-deleted`, the start-up probe) start with it: no group does, so no client can
    /// publish into or clear them, not even where the file system ignores case (a Mac's folder
    /// bind-mounted into the container), and a hidden folder, which no reader lists, is no group.
    public static let reservedGroupPrefix = "."

    /// Whether `name` can name a group: safe, and not reserved for the server's own folders.
    public static func isGroupName(_ name: String) -> Bool { groupProblem(with: name) == nil }

    /// Why `name` cannot name a group, or nil when it can.
    public static func groupProblem(with name: String) -> String? {
        if let problem = problem(with: name) { return problem }
        return name.hasPrefix(reservedGroupPrefix)
            ? "starts with '.': hidden folders are the server's own (.feed-server-...) and no reader lists them" : nil
    }

    /// Whether `byte` may appear in a safe name (A-Z a-z 0-9 - _ .).
    @inlinable public static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }
}
