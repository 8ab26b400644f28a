#if canImport(Glibc)
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
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread.
    public static func start(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let context = Unmanaged.passRetained(Body(body))
        #if canImport(Darwin)
        var thread: pthread_t?  // a pointer type on Darwin, an integer on Linux
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(
            &thread, nil,
            { argument in
                let raw: UnsafeMutableRawPointer? = argument  // optional on Linux, not on Darwin
                guard let raw else { return nil }
                Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, context.toOpaque())
        guard status == 0 else {
            context.release()
            throw ThreadStartError(code: status)
        }
        #if canImport(Darwin)
        if let thread { checkPthread(pthread_detach(thread), "pthread_detach") }
        #else
        checkPthread(pthread_detach(thread), "pthread_detach")
        #endif
    }
}
