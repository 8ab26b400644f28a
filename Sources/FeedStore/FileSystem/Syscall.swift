#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place system calls go through: retries EINTR and turns -1 + errno into `FileSystemError`.
public enum Syscall {
    /// Runs a call that returns -1 on failure (an `Int32` status or an `Int` byte count).
    public static func run<Result: BinaryInteger>(_ operation: String, _ path: String, _ call: () -> Result) throws -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno == EINTR { continue }
            throw FileSystemError(operation: operation, path: path, errno: errno)
        }
    }
}
