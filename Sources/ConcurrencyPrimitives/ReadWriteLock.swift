#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `pthread_rwlock_t` (initialised in init, destroyed in deinit), preferring writers.
public final class ReadWriteLock: @unchecked Sendable {
    // pthread locks must not move: the lock lives in its own allocation.
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    /// A new, unlocked lock.
    public init() {
        var attributes = pthread_rwlockattr_t()
        checkPthread(pthread_rwlockattr_init(&attributes), "pthread_rwlockattr_init")
        #if canImport(Glibc)
        // glibc prefers readers by default: a writer could then wait for as long as readers keep
        // overlapping. No caller takes the lock recursively, which this kind requires.
        checkPthread(
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)),
            "pthread_rwlockattr_setkind_np")
        #endif
        checkPthread(pthread_rwlock_init(lock, &attributes), "pthread_rwlock_init")
        checkPthread(pthread_rwlockattr_destroy(&attributes), "pthread_rwlockattr_destroy")
    }

    /// Runs `body` holding the lock shared (`pthread_rwlock_rdlock`).
    public func shared<T>(_ body: () throws -> T) rethrows -> T {
        checkPthread(pthread_rwlock_rdlock(lock), "pthread_rwlock_rdlock")
        defer { checkPthread(pthread_rwlock_unlock(lock), "pthread_rwlock_unlock") }
        return try body()
    }

    /// Runs `body` holding the lock shared if that needs no wait (`pthread_rwlock_tryrdlock`);
    /// nil, without running it, while a writer holds the lock or waits for it.
    public func sharedIfFree<T>(_ body: () throws -> T) rethrows -> T? {
        let status = pthread_rwlock_tryrdlock(lock)
        if status == EBUSY { return nil }
        checkPthread(status, "pthread_rwlock_tryrdlock")
        defer { checkPthread(pthread_rwlock_unlock(lock), "pthread_rwlock_unlock") }
        return try body()
    }

    /// Runs `body` holding the lock exclusively (`pthread_rwlock_wrlock`).
    public func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        checkPthread(pthread_rwlock_wrlock(lock), "pthread_rwlock_wrlock")
        defer { checkPthread(pthread_rwlock_unlock(lock), "pthread_rwlock_unlock") }
        return try body()
    }

    deinit {
        checkPthread(pthread_rwlock_destroy(lock), "pthread_rwlock_destroy")
        lock.deallocate()
    }
}
