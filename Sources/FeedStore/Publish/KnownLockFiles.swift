import ConcurrencyPrimitives

/// The group folders whose `publish.lock` this process has opened. A lock file is never removed
/// (a `DELETE` leaves it), so once it was opened a publish need not look for it before deciding
/// whether taking the lock would create it. One entry per group folder on disk.
final class KnownLockFiles: Sendable {
    private let folders = Lock<Set<String>>([])

    /// Whether the lock file of the group in `folder` was opened by this process.
    func contains(_ folder: String) -> Bool { folders.withLock { $0.contains(folder) } }

    /// Records that the lock file of the group in `folder` was just opened.
    func insert(_ folder: String) { _ = folders.withLock { $0.insert(folder) } }
}
