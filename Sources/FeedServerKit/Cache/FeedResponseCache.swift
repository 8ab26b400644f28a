import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// Rendered read responses per group and schema filter, revalidated on every request by
/// `FeedStore.isCurrent` (one `lstat` of `current.json`; no JSON is parsed on a hit).
///
/// Another process may publish into the same root, so the cache never trusts its own
/// invalidation alone: the on-disk token decides.
final class FeedResponseCache: Sendable {
    /// What is cached per group and schema filter.
    struct Key: Hashable, Sendable {
        var group: String
        var schemaVersion: Int?
    }

    /// The rendered body and headers for one served generation.
    final class Entry: Sendable {
        let token: ChangeToken
        let entityTag: String
        let body: SharedBody
        /// Headers of both the `200` and the `304` (ETag, Cache-Control, nosniff, X-Feed-*).
        let headers: [(String, String)]
        /// Whether candidates were skipped to reach the served generation.
        let isFallback: Bool
        /// The served generation's id.
        let generationId: String
        /// The served generation's fingerprint.
        let fingerprint: String
        /// When the served generation was written.
        let generatedAtEpochMs: Int64
        /// The served generation's schema version.
        let schemaVersion: Int
        private let compactPayload: [UInt8]
        private let parsed = Lock<JSONDocument?>(nil)

        /// The payload as a document, read once per cached generation (timelines): its tape beside
        /// the compact payload the entry holds anyway.
        func payload() throws(JSONParseError) -> JSONDocument {
            if let document = parsed.withLock({ $0 }) { return document }
            let document = try JSONDocument(canonical: compactPayload)
            parsed.withLock { $0 = document }
            return document
        }

        /// The `200` response (built once, and queued as one prepared `MHD_Response`).
        let ok: HTTPResponse
        /// The `304` response, stating the `200`'s `Content-Length` (RFC 9110 §8.6).
        let notModified: HTTPResponse
        /// The prepared `MHD_Response`s of `ok` and `notModified`.
        let okPrepared = PreparedResponse()
        let notModifiedPrepared = PreparedResponse()

        init(
            token: ChangeToken, generation: Generation, body: SharedBody, headers: [(String, String)], isFallback: Bool
        ) {
            self.token = token
            entityTag = Conditional.entityTag(generation.fingerprint)
            generationId = generation.id
            fingerprint = generation.fingerprint
            generatedAtEpochMs = generation.generatedAtEpochMs
            schemaVersion = generation.schemaVersion
            compactPayload = generation.compactPayload
            self.body = body
            self.headers = headers
            self.isFallback = isFallback
            var ok = HTTPResponse(status: 200, headers: [("Content-Type", "application/json")] + headers, shared: body)
            ok.prepared = okPrepared
            self.ok = ok
            var notModified = HTTPResponse(status: 304, headers: headers)
            notModified.body = .lengthOnly(body.bytes.count)
            notModified.prepared = notModifiedPrepared
            self.notModified = notModified
        }
    }

    /// The result of a lookup.
    enum Lookup {
        case feed(Entry)
        case noFeed(FeedRead)
    }

    private let store: FeedStore
    private let entries = Lock<[Key: Entry]>([:])
    /// Keys with no readable generation, so a waiter on one (an unused `schemaVersion`, a group
    /// that does not exist) does not re-read the whole group on every check.
    private let missing = Lock<[Key: Miss]>([:])
    /// A key found with no readable generation is read again at most this often, sooner when
    /// its pointer or `generations/` changed.
    static let missRecheckNanos: Int64 = 1_000_000_000

    private struct Miss {
        let token: ChangeToken
        let read: FeedRead
        let checkedAtNanos: Int64
    }
    private let capacity: Int
    /// The `Cache-Control` of every answer (`ReadCaching`).
    private let cacheControl: String

    /// A cache over `store` holding at most `capacity` entries.
    init(store: FeedStore, capacity: Int = 4096, caching: ReadCaching = .shared) {
        self.store = store
        self.capacity = capacity
        cacheControl = caching.feeds
    }

    /// The cached responses for a key when they are still current; nil on a miss (nothing is
    /// rendered here, so a caller on libmicrohttpd's threads never reads a whole feed).
    func current(_ key: Key) -> Entry? {
        guard let entry = entries.withLock({ $0[key] }) else { return nil }
        if store.isCurrent(entry.token) { return entry }
        // Dropped at once: the check that found it stale may have been the one an interval
        // allows (the served feed.json's), so asking again could wrongly say current.
        entries.withLock { entries in
            if entries[key] === entry { entries.removeValue(forKey: key) }
        }
        return nil
    }

    /// Whether `lookup` would answer `key` from memory: a current entry, or a remembered absence
    /// still within its recheck interval.
    func isAnsweredFromMemory(_ key: Key) -> Bool {
        if current(key) != nil { return true }
        guard let miss = missing.withLock({ $0[key] }) else { return false }
        return MonotonicClock.nanos() - miss.checkedAtNanos < Self.missRecheckNanos && store.isCurrent(miss.token)
    }

    /// The current responses for a key, rendering them on a miss.
    func lookup(_ key: Key) -> Lookup {
        if let entry = current(key) { return .feed(entry) }
        let now = MonotonicClock.nanos()
        if let miss = missing.withLock({ $0[key] }), now - miss.checkedAtNanos < Self.missRecheckNanos,
            store.isCurrent(miss.token)
        {
            return .noFeed(miss.read)
        }
        let snapshot = store.snapshot(group: key.group, schemaVersion: key.schemaVersion)
        guard let generation = snapshot.read.served else {
            entries.withLock { _ = $0.removeValue(forKey: key) }
            missing.withLock { missing in
                if missing.count >= capacity { missing.removeAll(keepingCapacity: true) }
                missing[key] = Miss(token: snapshot.token, read: snapshot.read, checkedAtNanos: now)
            }
            return .noFeed(snapshot.read)
        }
        missing.withLock { _ = $0.removeValue(forKey: key) }
        let entry = render(key, generation, snapshot)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
        return .feed(entry)
    }

    private func render(_ key: Key, _ generation: Generation, _ snapshot: FeedSnapshot) -> Entry {
        let tag = Conditional.entityTag(generation.fingerprint)
        // nosniff in the 304's headers too: a cache that freshens the stored 200 with them keeps it.
        var headers = [
            ("ETag", tag), ("Cache-Control", cacheControl), ("X-Content-Type-Options", "nosniff"),
            ("X-Feed-Generation", generation.id),
        ]
        if let fallback = FeedRendering.fallbackHeader(
            snapshot.read, group: key.group, schemaVersion: key.schemaVersion)
        {
            headers.append(("X-Feed-Fallback", fallback))
        }
        return Entry(
            token: snapshot.token, generation: generation,
            body: SharedBody(FeedRendering.body(group: key.group, generation: generation)),
            headers: headers, isFallback: snapshot.read.isFallback)
    }
}
