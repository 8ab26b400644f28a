#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed file-system call: which operation, on which path, and the errno it returned.
public struct FileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The failures callers act on differently, named for readers of the code.
    public enum Kind: Equatable, Sendable {
        case notFound
        case alreadyExists
        case noSpace
        case permissionDenied
        case readOnlyFileSystem
        case notADirectory
        case symbolicLink
        case tooLarge
        case other
    }

    /// What went wrong, as a readable category.
    public let kind: Kind
    /// The system call or step that failed, for example `"rename"`.
    public let operation: String
    /// The path the operation was applied to.
    public let path: String
    /// The raw errno value (0 when the failure was detected by us, not by the kernel).
    public let errno: Int32

    /// Creates an error from an errno value, classifying it into a `Kind`.
    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.kind = Self.classify(errno)
    }

    /// Creates an error detected by our own checks rather than by a system call.
    public init(kind: Kind, operation: String, path: String) {
        self.kind = kind
        self.operation = operation
        self.path = path
        self.errno = 0
    }

    private static func classify(_ code: Int32) -> Kind {
        switch code {
        case ENOENT: return .notFound
        case EEXIST, ENOTEMPTY: return .alreadyExists
        case ENOSPC, EDQUOT: return .noSpace
        case EACCES, EPERM: return .permissionDenied
        case EROFS: return .readOnlyFileSystem
        case ENOTDIR: return .notADirectory
        case ELOOP: return .symbolicLink
        case EFBIG: return .tooLarge
        default: return .other
        }
    }

    /// The same error with `root`'s prefix removed from its path, so it can be shown to a
    /// client without revealing where the store lives (`rename g/generations/1.tmp -> g/generations/1`).
    public func relativized(to root: String) -> FileSystemError {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        let relative = path == root ? "." : path.replacing(prefix, with: "")
        return FileSystemError(kind: kind, operation: operation, path: relative, errno: errno)
    }

    private init(kind: Kind, operation: String, path: String, errno: Int32) {
        self.kind = kind
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// A one-line account such as `rename /a -> /b: No space left on device`.
    public var description: String {
        let reason = errno != 0 ? String(cString: strerror(errno)) : "\(kind)"
        return "\(operation) \(path): \(reason)"
    }
}
