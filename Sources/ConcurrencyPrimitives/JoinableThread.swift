import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread its starter waits for: when `join` returns, the thread has ended, its
/// thread-local destructors included (OpenSSL frees a thread's error state in one), so no thread
/// of a finished task is still winding down when the process exits.
public final class JoinableThread: @unchecked Sendable {
    #if canImport(Darwin)
    private var thread: pthread_t?  // a pointer type on Darwin, an integer on Linux
    #else
    private var thread = pthread_t()
    #endif
    private let body: @Sendable () -> Void
    /// Whether `join` or `detach` was called: either one, once (a second `pthread_join` could
    /// reach another thread that reused the first one's identity).
    private let settled = Atomic<Bool>(false)

    /// Starts `body` on a new thread.
    public init(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                let raw: UnsafeMutableRawPointer? = argument  // optional on Linux, not on Darwin
                guard let raw else { return nil }
                Unmanaged<JoinableThread>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<JoinableThread>.fromOpaque(context).release()  // the thread never took it
            settled.store(true, ordering: .relaxed)  // there is no thread to join or detach
            throw ThreadStartError(code: status)
        }
    }

    /// Lets the thread end without anyone joining it (`DetachedThread`); instead of `join`.
    func detach() {
        settle("detach")
        #if canImport(Darwin)
        if let thread { checkPthread(pthread_detach(thread), "pthread_detach") }
        #else
        checkPthread(pthread_detach(thread), "pthread_detach")
        #endif
    }

    /// Waits until the thread has ended. Call it once.
    public func join() {
        settle("join")
        #if canImport(Darwin)
        if let thread { checkPthread(pthread_join(thread, nil), "pthread_join") }
        #else
        checkPthread(pthread_join(thread, nil), "pthread_join")
        #endif
    }

    /// A thread nobody joined or detached would keep its stack as a zombie: it is detached.
    deinit {
        if !settled.load(ordering: .acquiring) { detach() }
    }

    private func settle(_ call: StaticString) {
        let (exchanged, _) = settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        precondition(exchanged, "JoinableThread: \(call) after the thread was joined or detached")
    }
}
