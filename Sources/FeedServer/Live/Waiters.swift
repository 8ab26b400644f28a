import FeedStore
import Foundation
import Synchronization

/// Long-poll waiters: requests parked until the feed they watch changes or their wait ends.
///
/// Parked requests hold no thread (libmicrohttpd suspends their connections). One watcher thread
/// keeps the deadlines (libmicrohttpd 0.9.75 never times a suspended connection out) and notices
/// publishes by other processes into the same root by revalidating each watched feed every
/// 100 ms through the read cache (one `lstat` per watched feed); publishes through this server
/// wake their waiters at once.
final class Waiters: Sendable {
    private struct Waiter {
        let key: FeedResponseCache.Key
        let entityTag: String
        let deadlineNanos: Int64
        let suspension: Suspension
    }

    private let cache: FeedResponseCache
    private let metrics: Metrics
    private let waiting = Mutex<[ObjectIdentifier: Waiter]>([:])
    private let running = Atomic<Bool>(true)
    /// How often deadlines and other processes' publishes are checked.
    static let tickNanos: Int64 = 100_000_000

    init(cache: FeedResponseCache, metrics: Metrics) {
        self.cache = cache
        self.metrics = metrics
        let watcher = Thread { [weak self] in self?.watch() }
        watcher.name = "feed-server waiters"
        watcher.start()
    }

    /// Parks a request that holds `entityTag` for `key` until it changes or `seconds` pass.
    func park(key: FeedResponseCache.Key, entityTag: String, seconds: Double) -> Suspension {
        let suspension = Suspension()
        let deadline = MonotonicClock.nanos() + Int64(seconds * 1e9)
        waiting.withLock { $0[ObjectIdentifier(suspension)] = Waiter(key: key, entityTag: entityTag, deadlineNanos: deadline, suspension: suspension) }
        metrics.openWaiters.add(1, ordering: .relaxed)
        // A publish between the caller's check and this registration must not be missed.
        check(keys: [key])
        return suspension
    }

    /// Checks the waiters of one group now (after a publish through this server).
    func feedChanged(group: String) {
        let keys = waiting.withLock { Set($0.values.filter { $0.key.group == group }.map(\.key)) }
        check(keys: keys)
    }

    /// Wakes everyone and ends the watcher (shutdown).
    func stop() {
        running.store(false, ordering: .relaxed)
        wake { _ in true }
    }

    private func watch() {
        while running.load(ordering: .relaxed) {
            usleep(useconds_t(Self.tickNanos / 1000))
            let now = MonotonicClock.nanos()
            wake { $0.deadlineNanos <= now }
            check(keys: waiting.withLock { Set($0.values.map(\.key)) })
        }
    }

    /// Wakes the waiters whose feed no longer has the tag they hold.
    private func check(keys: Set<FeedResponseCache.Key>) {
        for key in keys {
            let current: String?
            if case .feed(let entry) = cache.lookup(key) { current = entry.entityTag } else { current = nil }
            wake { $0.key == key && $0.entityTag != current }
        }
    }

    private func wake(where condition: (Waiter) -> Bool) {
        let woken = waiting.withLock { waiting -> [Suspension] in
            let matches = waiting.filter { condition($0.value) }
            for id in matches.keys { waiting.removeValue(forKey: id) }
            return matches.values.map(\.suspension)
        }
        guard !woken.isEmpty else { return }
        metrics.openWaiters.subtract(woken.count, ordering: .relaxed)
        woken.forEach { $0.wake() }
    }
}
