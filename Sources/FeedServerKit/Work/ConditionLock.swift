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
final class ConditionLock: @unchecked Sendable {
    // pthread objects must not move: each lives in its own allocation.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // Darwin has no such call: see wait(untilNanos:)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Runs `body` holding the mutex.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a signal; call holding the mutex (inside `withLock`).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a signal or until `deadlineNanos` on the monotonic clock; false when the
    /// deadline passed. Call holding the mutex.
    @discardableResult
    func wait(untilNanos deadlineNanos: Int64) -> Bool {
        #if canImport(Darwin)
        // Darwin's condition variables wait on the wall clock only; its relative wait is the
        // monotonic equivalent. (Not built or tested here: see docs/recipes.md.)
        let remaining = max(0, deadlineNanos - MonotonicClock.nanos())
        var relative = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        return pthread_cond_timedwait_relative_np(condition, mutex, &relative) != ETIMEDOUT
        #else
        var deadline = timespec(tv_sec: Int(deadlineNanos / 1_000_000_000), tv_nsec: Int(deadlineNanos % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
        #endif
    }

    /// Wakes one waiter.
    func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiter.
    func broadcast() { pthread_cond_broadcast(condition) }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }
}
