#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place system calls go through: retries EINTR and turns -1 + errno into `FileSystemError`.
/// `close` has a funnel of its own, which never retries.
public enum Syscall {
    /// Runs a call that returns -1 on failure (an `Int32` status or an `Int` byte count).
    public static func run<Result: BinaryInteger>(
        _ operation: String, _ path: String, _ call: () -> Result
    ) throws -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno == EINTR { continue }
            throw FileSystemError(operation: operation, path: path, errno: errno)
        }
    }

    /// Closes `descriptor` once, and reports an error `close` returns (a deferred write error,
    /// on NFS and some FUSE file systems, shows up only here).
    ///
    /// Never retried: on Linux the descriptor is released even when `close` fails with `EINTR`,
    /// so a second `close` could close a descriptor another thread has just been given. `EINTR`
    /// is therefore success: the descriptor is gone, and whether a deferred error was lost
    /// cannot be known (swift-system and swift-nio treat it the same way).
    public static func close(_ descriptor: Int32, _ path: String) throws(FileSystemError) {
        try close(descriptor, path, closing: systemClose)
    }

    /// The same with `closing` standing in for the system call (tests).
    package static func close(_ descriptor: Int32, _ path: String, closing: (Int32) -> Int32) throws(FileSystemError) {
        guard closing(descriptor) == -1 else { return }
        let code = errno
        if code == EINTR { return }
        throw FileSystemError(operation: "close", path: path, errno: code)
    }
}

/// `close(2)` itself (the name is taken inside `Syscall`).
private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
