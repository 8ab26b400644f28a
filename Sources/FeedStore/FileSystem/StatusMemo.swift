import ConcurrencyPrimitives

/// Values learned from files, each kept while its file keeps the status it had before it was read
/// (a rename over the path gives a new inode, a write in place new times): the next look at an
/// unchanged file costs one `lstat` instead of a read and a parse.
final class StatusMemo<Value: Sendable>: Sendable {
    private struct Known {
        let status: FileStatus
        let value: Value
    }

    private let known = Lock<[String: Known]>([:])
    private let capacity: Int

    /// A memo of at most `capacity` files (forgetting all of them when full).
    init(capacity: Int) { self.capacity = capacity }

    /// What was learned of the file at `path` while its status is `status`.
    func value(_ path: String, status: FileStatus) -> Value? {
        known.withLock { known in
            guard let entry = known[path], entry.status == status else { return nil }
            return entry.value
        }
    }

    /// Remembers what a read of `path` found, with the status taken before that read.
    func remember(_ value: Value, _ path: String, status: FileStatus) {
        known.withLock { known in
            if known.count >= capacity, known[path] == nil { known.removeAll(keepingCapacity: true) }
            known[path] = Known(status: status, value: value)
        }
    }
}
