#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`; the same `withLock` API as `Synchronization.Mutex`.
///
/// A pthread mutex rather than `Synchronization.Mutex`, because ThreadSanitizer cannot see
/// `Mutex` on Linux whenever it is contended: its fast path is an atomic compare-exchange inlined
/// into our (instrumented) code, but a contended lock spins inside the uninstrumented
/// Synchronization library and then lets the kernel hand the lock over (`FUTEX_LOCK_PI` /
/// `FUTEX_UNLOCK_PI`), so TSan never sees the release/acquire pair and reports two critical
/// sections of the same lock as a race. `pthread_mutex_lock`/`unlock` are intercepted by TSan, so
/// every report it makes on code guarded by this lock is a real one (docs/testing.md).
public struct Lock<Value>: ~Copyable, @unchecked Sendable {
    // Both live on the heap: a pthread mutex must not move, and neither may the value its
    // callers get `inout` access to.
    // Visible to inlined code: `withLock` is inlined into its callers, so each use is
    // specialized for its closure instead of going through generic thunks on every call.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// A lock guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        checkPthread(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        checkPthread(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        checkPthread(pthread_mutex_lock(mutex), "pthread_mutex_lock")
        defer { checkPthread(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body(&value.pointee)
    }

    /// Runs `body` with exclusive access to the value if it can be had by `deadline` (wall-clock
    /// time, as `pthread_mutex_timedlock` takes it); nil, and `body` not run, when it cannot.
    public borrowing func withLock<Result, E: Error>(
        waitingUntil deadline: timespec, _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> Result? {
        var deadline = deadline
        let code = pthread_mutex_timedlock(mutex, &deadline)
        if code == ETIMEDOUT { return nil }
        checkPthread(code, "pthread_mutex_timedlock")
        defer { checkPthread(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body(&value.pointee)
    }
}
