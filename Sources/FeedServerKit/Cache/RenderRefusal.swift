import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

extension FeedResponseCache {
    /// What a key serves, without its body: enough to answer a `304`, wake waiters and tell
    /// streams.
    struct ServedFacts: Sendable {
        let token: ChangeToken
        let entityTag: String
        let fingerprint: String
        let generationId: String
        let generatedAtEpochMs: Int64
    }

    /// A read refused because a new render would pass the outside limit, with what the served
    /// generation's snapshot told: enough to answer a `304`, park a long-poll or tell a stream
    /// without the body.
    struct Refusal: Sendable {
        /// The outside limit, in bytes (for the 503's text).
        let limit: Int
        /// What the snapshot said the key serves.
        let served: ServedFacts
        /// The `304` the entry would answer (its `Content-Length` the render's exact length).
        let notModified: HTTPResponse
        /// About how many bytes the render needs (`RenderedGeneration.estimatedBytes`).
        let estimate: Int

        var token: ChangeToken { served.token }
        var entityTag: String { served.entityTag }
        var fingerprint: String { served.fingerprint }
    }
}

extension FeedResponseCache {
    /// `bytes` (an answer built per request, such as a timeline) as a body counted with the
    /// renders until the last answer holding it is sent; nil when bodies outside the cache hold
    /// the outside limit (one alone is always taken; a small one within the reserve past it).
    func countedBody(_ bytes: [UInt8]) -> SharedBody? {
        let count = bytes.count
        guard admit(count) else { return nil }
        let ledger = ledger
        return SharedBody(bytes, whenFreed: { ledger.release(count) })
    }
}

/// Refusals remembered per key, so a key refused as busy is not read again (a whole feed parsed)
/// until its generation changes or room appears.
final class RefusalMemo: Sendable {
    private let entries = Lock<[FeedResponseCache.Key: FeedResponseCache.Refusal]>([:])
    private let capacity: Int

    /// A memo of at most `capacity` keys (emptied when full: it is only a shortcut).
    init(capacity: Int) { self.capacity = capacity }

    /// The refusal remembered for `key`.
    func refusal(_ key: FeedResponseCache.Key) -> FeedResponseCache.Refusal? { entries.withLock { $0[key] } }

    /// Remembers `refusal` for `key`.
    func remember(_ refusal: FeedResponseCache.Refusal, for key: FeedResponseCache.Key) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = refusal
        }
    }

    /// Forgets `key` (it was rendered after all).
    func forget(_ key: FeedResponseCache.Key) {
        entries.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Forgets every key of `group` (a publish, delete or fault through this server).
    func forget(group: String) {
        entries.withLock { entries in
            for key in entries.keys where key.group == group { entries.removeValue(forKey: key) }
        }
    }
}
