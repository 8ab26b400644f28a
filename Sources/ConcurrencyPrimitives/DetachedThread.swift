#if canImport(Glibc)
import CThreadScheduling
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a thread could not be started (`pthread_create`'s error: `EAGAIN` under a process or
/// memory limit).
public struct ThreadStartError: Error, CustomStringConvertible {
    /// The error number `pthread_create` returned.
    public let code: Int32

    /// `strerror`'s text for the code.
    public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
}

/// A POSIX thread nobody joins (the watchers, the work pool's workers).
///
/// Exists instead of Foundation's `Thread` so that the server links only FoundationEssentials:
/// Foundation proper brings ICU and its 34 MB of data into the statically linked binary, half
/// of the container image's budget (docs/containers.md).
public enum DetachedThread {
    /// Starts `body` on a new detached thread, named `name` in `top -H`, `perf` and
    /// `/proc/<pid>/task/*/comm` (Linux keeps 15 bytes); unnamed, it keeps its creator's name.
    public static func start(
        name: String? = nil, _ body: @escaping @Sendable () -> Void
    ) throws(ThreadStartError) {
        let named: @Sendable () -> Void =
            if let name {
                {
                    nameCurrentThread(name)
                    body()
                }
            } else { body }
        try JoinableThread(named).detach()
    }

    /// Names the calling thread; a failure leaves the old name, which only tools show.
    static func nameCurrentThread(_ name: String) {
        #if canImport(Darwin)
        _ = pthread_setname_np(name)
        #else
        _ = CThreadScheduling_set_name(name)
        #endif
    }
}
