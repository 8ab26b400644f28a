#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable; owns one `pthread_mutex_t` and one `pthread_cond_t`
/// (initialised in init, destroyed in deinit). The condition waits on `CLOCK_MONOTONIC`.
///
/// Exists instead of Foundation's `NSCondition` so that the server links only
/// FoundationEssentials (see `DetachedThread`), and because `Synchronization.Mutex` has no
/// condition to wait on.
public final class ConditionLock: @unchecked Sendable {
    // pthread objects must not move: each lives in its own allocation.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// A new, unlocked mutex and its condition.
    public init() {
        checkPthread(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        var attributes = pthread_condattr_t()
        checkPthread(pthread_condattr_init(&attributes), "pthread_condattr_init")
        #if !canImport(Darwin)
        // Darwin has no such call: see wait(untilNanos:).
        checkPthread(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        #endif
        checkPthread(pthread_cond_init(condition, &attributes), "pthread_cond_init")
        checkPthread(pthread_condattr_destroy(&attributes), "pthread_condattr_destroy")
    }

    /// Runs `body` holding the mutex.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        checkPthread(pthread_mutex_lock(mutex), "pthread_mutex_lock")
        defer { checkPthread(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body()
    }

    /// Waits for a signal; call holding the mutex (inside `withLock`).
    public func wait() { checkPthread(pthread_cond_wait(condition, mutex), "pthread_cond_wait") }

    /// Waits for a signal or until `deadlineNanos` on the monotonic clock; false when the
    /// deadline passed. Call holding the mutex.
    @discardableResult
    public func wait(untilNanos deadlineNanos: Int64) -> Bool {
        #if canImport(Darwin)
        // Darwin's condition variables wait on the wall clock only; its relative wait is the
        // monotonic equivalent. (Not built or tested here: see docs/recipes.md.)
        let remaining = max(0, deadlineNanos - MonotonicClock.nanos())
        var relative = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        let result = pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #else
        let clamped = max(0, deadlineNanos)
        var deadline = timespec(tv_sec: Int(clamped / 1_000_000_000), tv_nsec: Int(clamped % 1_000_000_000))
        let result = pthread_cond_timedwait(condition, mutex, &deadline)
        #endif
        if result == ETIMEDOUT { return false }
        checkPthread(result, "pthread_cond_timedwait")
        return true
    }

    /// Wakes one waiter.
    public func signal() { checkPthread(pthread_cond_signal(condition), "pthread_cond_signal") }

    /// Wakes every waiter.
    public func broadcast() { checkPthread(pthread_cond_broadcast(condition), "pthread_cond_broadcast") }

    deinit {
        checkPthread(pthread_cond_destroy(condition), "pthread_cond_destroy")
        checkPthread(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        condition.deallocate()
        mutex.deallocate()
    }
}
