#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place system calls go through: retries EINTR and turns -1 + errno into `FileSystemError`.
enum Syscall {
    /// Runs a call returning Int32 (-1 on failure).
    static func run(_ operation: String, _ path: String, _ call: () -> Int32) throws -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno == EINTR { continue }
            throw FileSystemError(operation: operation, path: path, errno: errno)
        }
    }

    /// Runs a call returning a byte count (-1 on failure).
    static func run(_ operation: String, _ path: String, _ call: () -> Int) throws -> Int {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno == EINTR { continue }
            throw FileSystemError(operation: operation, path: path, errno: errno)
        }
    }
}
