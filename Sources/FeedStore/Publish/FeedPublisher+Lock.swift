import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The group's lock: this process's claim first (writers of one process wake each other), then
/// the advisory file lock every process takes.
extension FeedPublisher {
    /// Runs `body` holding the group's lock, creating the group folder the lock file lives in
    /// first, waiting `lockWaitMs` at most for another writer (`groupLocked` after it).
    /// File-system failures become `PublishError.storage` with root-relative paths.
    func underGroupLock<T>(_ operation: String, _ body: () throws -> T) throws(PublishError) -> T {
        let lock = try lockOrRefuse()
        defer { lock.unlock() }
        return try mappingFailures(operation) { try body() }
    }

    /// The group's lock within `lockWaitMs`, or `groupLocked`.
    func lockOrRefuse() throws(PublishError) -> any FileLock {
        let wait = configuration.lockWaitMs
        guard let lock = try groupLock(waitingUntil: MonotonicClock.nanos() &+ wait &* 1_000_000) else {
            throw .groupLocked(waitedMs: wait)
        }
        return lock
    }

    /// The group's lock if it can be had before `deadline` (monotonic nanoseconds), nil when
    /// another holder keeps it that long.
    func groupLock(waitingUntil deadline: Int64) throws(PublishError) -> (any FileLock)? {
        guard writers.claim(layout.directory, until: deadline) else { return nil }
        do {
            guard let fileLock = try fileLock(waitingUntil: deadline) else {
                writers.release(layout.directory)
                return nil
            }
            return ClaimedGroupLock(fileLock, writers: writers, group: layout.directory)
        } catch {
            writers.release(layout.directory)
            throw error
        }
    }

    /// The advisory file lock; another process may hold it. `flock` has no timed wait, so this polls.
    private func fileLock(waitingUntil deadline: Int64) throws(PublishError) -> (any FileLock)? {
        try mappingFailures("lock") {
            // Looked at every time, not only when the lock's open fails: a symbolic link in the
            // folder's place would let that open write the lock file, and all after it, elsewhere.
            try prepareGroupFolder()
            // Short sleeps first: an ordinary writer holds the lock for milliseconds.
            var pause: useconds_t = 500
            while true {
                if let lock = try fileSystem.tryLockExclusive(layout.lockFile) { return lock }
                if MonotonicClock.nanos() >= deadline { return nil }
                usleep(pause)
                pause = min(pause * 2, 10_000)
            }
        }
    }
}
