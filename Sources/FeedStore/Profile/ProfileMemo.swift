import ConcurrencyPrimitives

/// Each group's profile as last read, kept while `profile.json` keeps the status it was read at
/// (every store replaces it by a rename, which gives a new inode): a publish then costs one
/// `lstat` of it instead of a read, a parse and the time zone's file.
final class ProfileMemo: Sendable {
    private struct Known {
        let status: FileStatus
        let profile: WidgetProfile
    }

    private let known = Lock<[String: Known]>([:])
    private let capacity: Int

    /// A memo of at most `capacity` profiles (forgetting all of them when full; each is at most
    /// `WidgetProfile.maxBytes` of JSON).
    init(capacity: Int = 256) { self.capacity = capacity }

    /// The profile read from `path` while its status is `status`.
    func profile(_ path: String, status: FileStatus) -> WidgetProfile? {
        known.withLock { known in
            guard let entry = known[path], entry.status == status else { return nil }
            return entry.profile
        }
    }

    /// Remembers the profile a read of `path` found, its status taken before the read.
    func remember(_ profile: WidgetProfile, _ path: String, status: FileStatus) {
        known.withLock { known in
            if known.count >= capacity, known[path] == nil { known.removeAll(keepingCapacity: true) }
            known[path] = Known(status: status, profile: profile)
        }
    }
}
