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
        #if canImport(Darwin)
        var thread: pthread_t?  // a pointer type on Darwin, an integer on Linux
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(&thread, nil, { argument in
            let raw: UnsafeMutableRawPointer? = argument  // optional on Linux, not on Darwin
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        // Only at start-up, before any request: a server without its watcher would keep no deadline.
        guard status == 0 else { fatalError("cannot start a thread: \(String(cString: strerror(status)))") }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
    }
}
