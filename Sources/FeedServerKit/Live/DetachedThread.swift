#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A long-lived POSIX thread nobody joins (the waiters' watcher).
///
/// Exists instead of Foundation's `Thread` so that the server links only FoundationEssentials:
/// Foundation proper brings ICU and its 34 MB of data into the statically linked binary, half
/// of the container image's budget (docs/containers.md).
enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread.
    static func start(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        // Only at start-up, before any request: a server without its watcher would keep no deadline.
        guard status == 0 else { fatalError("cannot start a thread: \(String(cString: strerror(status)))") }
        pthread_detach(thread)
    }
}
