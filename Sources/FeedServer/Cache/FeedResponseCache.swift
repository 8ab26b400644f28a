import FeedStore
import Synchronization

/// Rendered read responses per group and schema filter, revalidated on every request by
/// `FeedStore.isCurrent` (a couple of `lstat` calls; no JSON is parsed on a hit).
///
/// Another process may publish into the same root, so the cache never trusts its own
/// invalidation alone: the on-disk token decides.
final class FeedResponseCache: Sendable {
    /// What is cached per group and schema filter.
    struct Key: Hashable, Sendable {
        var group: String
        var schemaVersion: Int?
    }

    /// The prepared `200` and `304` responses for one served generation.
    final class Entry: Sendable {
        let token: ChangeToken
        let entityTag: String
        let ok: PreparedResponse
        let notModified: PreparedResponse

        init(token: ChangeToken, entityTag: String, ok: PreparedResponse, notModified: PreparedResponse) {
            self.token = token
            self.entityTag = entityTag
            self.ok = ok
            self.notModified = notModified
        }
    }

    /// The result of a lookup.
    enum Lookup {
        case feed(Entry)
        case noFeed(FeedRead)
    }

    private let store: FeedStore
    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity: Int

    /// A cache over `store` holding at most `capacity` entries.
    init(store: FeedStore, capacity: Int = 4096) {
        self.store = store
        self.capacity = capacity
    }

    /// The current responses for a key, rendering them on a miss.
    func lookup(_ key: Key) -> Lookup {
        if let entry = entries.withLock({ $0[key] }), store.isCurrent(entry.token) {
            return .feed(entry)
        }
        let snapshot = store.snapshot(group: key.group, schemaVersion: key.schemaVersion)
        guard let generation = snapshot.read.served, let entry = render(key, generation, snapshot) else {
            entries.withLock { _ = $0.removeValue(forKey: key) }
            return .noFeed(snapshot.read)
        }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
        return .feed(entry)
    }

    private func render(_ key: Key, _ generation: Generation, _ snapshot: FeedSnapshot) -> Entry? {
        let tag = Conditional.entityTag(generation.fingerprint)
        var headers = [("ETag", tag), ("Cache-Control", "no-cache"), ("X-Feed-Generation", generation.id)]
        if let fallback = FeedRendering.fallbackHeader(snapshot.read) { headers.append(("X-Feed-Fallback", fallback)) }
        guard let ok = PreparedResponse(status: 200, headers: [("Content-Type", "application/json")] + headers,
                                        body: FeedRendering.body(group: key.group, generation: generation)),
              let notModified = PreparedResponse(status: 304, headers: headers, body: []) else { return nil }
        return Entry(token: snapshot.token, entityTag: tag, ok: ok, notModified: notModified)
    }
}
