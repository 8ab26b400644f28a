import ConcurrencyPrimitives
import FeedStore

/// Recent encodes keyed by source hash and settings, bounded by bytes (oldest evicted first),
/// so re-publishing the same photos costs hashing, not decoding.
///
/// An encode in progress is claimed: a second thread asking for the same key (a pack reaching
/// an image the upload's prefetch is encoding) waits for it instead of decoding it again, for at
/// most `maxWaitNanos`, after which it encodes the image itself.
final class EncodeCache: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        var sourceHash: String
        var format: ImageFormat
        var maxDimension: Int
        var quality: Int
    }

    private struct State {
        var entries: [Key: EncodedImage] = [:]
        var order: [Key] = []
        var bytes = 0
        var hits = 0
        var misses = 0
        var claimed: Set<Key> = []
    }

    // Guarded by `lock`.
    private var state = State()
    private let lock = ConditionLock()
    private let capacityBytes: Int
    private let maxWaitNanos: Int64

    init(capacityBytes: Int, maxWaitNanos: Int64 = 30_000_000_000) {
        self.capacityBytes = capacityBytes
        self.maxWaitNanos = maxWaitNanos
    }

    var hits: Int { lock.withLock { state.hits } }
    var misses: Int { lock.withLock { state.misses } }

    /// What `claim` found.
    enum Claim {
        /// The image, cached.
        case cached(EncodedImage)
        /// The caller encodes it, then calls `fill`.
        case claimed
        /// Another thread is encoding it (only when the caller does not wait).
        case busy
    }

    /// The cached image, or the claim to encode it. With `waiting`, waits while another thread
    /// holds the key's claim; without, answers `busy`.
    func claim(_ key: Key, waiting: Bool = true) -> Claim {
        lock.withLock {
            var deadline: Int64?
            while true {
                if let image = state.entries[key] {
                    state.hits += 1
                    return .cached(image)
                }
                if state.claimed.insert(key).inserted { break }
                if !waiting { return .busy }
                // Past the deadline the caller encodes too; both `fill`s are harmless.
                let until = deadline ?? MonotonicClock.nanos() &+ maxWaitNanos
                deadline = until
                if !lock.wait(untilNanos: until) { break }
            }
            state.misses += 1
            return .claimed
        }
    }

    /// Ends a claim with the encoded image, or with nil when the encode failed (a waiter then
    /// claims the key and tries itself).
    func fill(_ key: Key, with image: EncodedImage?) {
        lock.withLock {
            state.claimed.remove(key)
            if let image { store(key, image) }
            lock.broadcast()
        }
    }

    /// Whether an image is cached under `key` (tests).
    func contains(_ key: Key) -> Bool { lock.withLock { state.entries[key] != nil } }

    /// Call holding the lock.
    private func store(_ key: Key, _ image: EncodedImage) {
        guard image.bytes.count <= capacityBytes, state.entries[key] == nil else { return }
        state.entries[key] = image
        state.order.append(key)
        state.bytes += image.bytes.count
        while state.bytes > capacityBytes, !state.order.isEmpty {
            let oldest = state.order.removeFirst()
            state.bytes -= state.entries.removeValue(forKey: oldest)?.bytes.count ?? 0
        }
    }
}
