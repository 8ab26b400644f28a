import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everyone waiting for a feed to change: long-poll requests parked until it changes or their
/// wait ends, and Server-Sent Event streams that get an event per change and a heartbeat.
///
/// Parked requests hold no thread (libmicrohttpd suspends their connections). One watcher thread
/// keeps the deadlines (libmicrohttpd 0.9.75 never times a suspended connection out) and notices
/// publishes by other processes into the same root by revalidating each watched feed every
/// 100 ms against the change token of what it last served (the store's `lstat` probes): a feed
/// is read again only when it changed, so waiters on feeds the read cache could not keep cost no
/// reading. Publishes through this server wake their waiters at once: over HTTP, once the
/// publishing request has its answer (`AfterAnswer`); the next tick wakes them if that is late.
final class Waiters: Sendable {
    private struct Waiter {
        let key: FeedResponseCache.Key
        let entityTag: String
        let deadlineNanos: Int64
        let suspension: Suspension
    }

    private struct Subscriber {
        let key: FeedResponseCache.Key
        var lastFingerprint: String?
        var lastWriteNanos: Int64
        let stream: EventStream
    }

    /// What a watched key served when last looked at: enough to wake waiters and send events
    /// without holding the render (the read cache's budget decides what stays in memory).
    typealias Served = FeedResponseCache.ServedFacts

    private let cache: FeedResponseCache
    private let metrics: Metrics
    /// Per watched key, what it served when last read (none: read it at the next check).
    private let watched = Lock<[FeedResponseCache.Key: Served]>([:])
    private let waiting = Lock<[ObjectIdentifier: Waiter]>([:])
    private let subscribers = Lock<[ObjectIdentifier: Subscriber]>([:])
    /// A comment line this often keeps proxies and clients from closing an idle stream.
    static let heartbeatNanos: Int64 = 15_000_000_000
    private let running = Atomic<Bool>(true)
    /// How often deadlines and other processes' publishes are checked.
    static let tickNanos: Int64 = 100_000_000

    /// Most parked requests and streams together (`--max-waiters`), so they cannot take every
    /// connection slot; beyond it, `park` and `subscribe` say no and the route answers 503.
    let capacity: Int

    init(cache: FeedResponseCache, metrics: Metrics, capacity: Int = 512) throws(ThreadStartError) {
        self.cache = cache
        self.metrics = metrics
        self.capacity = capacity
        try DetachedThread.start(name: "feed-waiters") { [weak self] in self?.watch() }
    }

    /// Parks a request that holds `entityTag` for `key` until it changes or `seconds` pass.
    /// Once shutdown has begun nothing new is parked: the suspension comes back already woken,
    /// so the request is answered at once (libmicrohttpd aborts if any connection is still
    /// suspended when the daemon stops).
    func park(key: FeedResponseCache.Key, entityTag: String, seconds: Double) -> Suspension? {
        guard hasRoom else { return nil }
        let suspension = Suspension()
        let deadline = MonotonicClock.nanos() + Int64(seconds * 1e9)
        // `running` is read under the same lock `stop` flips it under, so a park either sees the
        // shutdown or is registered before `stop` wakes everyone.
        let parked = waiting.withLock { waiting -> Bool in
            guard running.load(ordering: .relaxed) else { return false }
            waiting[ObjectIdentifier(suspension)] = Waiter(
                key: key, entityTag: entityTag, deadlineNanos: deadline, suspension: suspension)
            return true
        }
        guard parked else {
            suspension.wake()
            return suspension
        }
        metrics.openWaiters.add(1, ordering: .relaxed)
        // A publish between the caller's check and this registration must not be missed.
        check(keys: [key])
        return suspension
    }

    /// Starts an event stream for `key`: the current generation at once unless the client's
    /// `Last-Event-ID` already names it, then one event per change.
    func subscribe(key: FeedResponseCache.Key, lastEventID: String?) -> EventStream? {
        guard hasRoom else { return nil }
        let stream = EventStream()
        stream.send(Array("retry: 2000\n\n".utf8))
        let subscribed = subscribers.withLock { subscribers -> Bool in
            guard running.load(ordering: .relaxed) else { return false }
            subscribers[ObjectIdentifier(stream)] = Subscriber(
                key: key, lastFingerprint: lastEventID, lastWriteNanos: MonotonicClock.nanos(), stream: stream)
            return true
        }
        guard subscribed else {
            // Shutting down: the stream ends after its first line instead of waiting.
            stream.close()
            return stream
        }
        metrics.openWaiters.add(1, ordering: .relaxed)
        // From memory only: this runs on a libmicrohttpd thread, and reading the group could
        // mean reading whole generations. Otherwise the watcher's next tick sends the event.
        if let served = cache.current(key) { send(served.facts, toStreamsOf: key) }
        return stream
    }

    /// Whether one more waiter fits under `capacity` (checked without reserving: a burst may pass
    /// it by a few, which is what a limit on connection slots needs).
    private var hasRoom: Bool { metrics.openWaiters.load(ordering: .relaxed) < capacity }

    /// Checks the waiters of one group now (after a publish through this server).
    func feedChanged(group: String) {
        let keys = waiting.withLock { Set($0.values.filter { $0.key.group == group }.map(\.key)) }
            .union(subscribers.withLock { Set($0.values.filter { $0.key.group == group }.map(\.key)) })
        check(keys: keys)
    }

    /// Wakes everyone, ends every stream and stops the watcher (shutdown).
    func stop() {
        // Flipped under both locks, so `park` and `subscribe` see it or were registered before.
        waiting.withLock { _ in subscribers.withLock { _ in running.store(false, ordering: .relaxed) } }
        wake { _ in true }
        let streams = subscribers.withLock { all -> [EventStream] in
            defer { all.removeAll() }
            return all.values.map(\.stream)
        }
        metrics.openWaiters.subtract(streams.count, ordering: .relaxed)
        for stream in streams { stream.close() }
    }

    private func watch() {
        while running.load(ordering: .relaxed) {
            usleep(useconds_t(Self.tickNanos / 1000))
            let now = MonotonicClock.nanos()
            wake { $0.deadlineNanos <= now }
            dropFinishedStreams()
            heartbeat(now: now)
            let keys = waiting.withLock { Set($0.values.map(\.key)) }.union(
                subscribers.withLock { Set($0.values.map(\.key)) })
            forgetUnwatched(keeping: keys)
            check(keys: keys)
        }
    }

    /// Wakes the waiters whose feed no longer has the tag they hold, and sends an event to the
    /// streams that have not seen the current generation.
    private func check(keys: Set<FeedResponseCache.Key>) {
        for key in keys {
            let served = current(key)
            wake { $0.key == key && $0.entityTag != served?.entityTag }
            guard let served else {
                sendGone(toStreamsOf: key)
                continue
            }
            send(served, toStreamsOf: key)
        }
    }

    /// What `key` serves now: what it served last while that is still current (no read), else
    /// read through the cache, and remembered for the next check.
    private func current(_ key: FeedResponseCache.Key) -> Served? {
        let known = watched.withLock { $0[key] }
        if let known, cache.isCurrent(known.token, of: key) { return known }
        let served: Served?
        switch cache.lookup(key) {
        case .feed(let entry): served = entry.facts
        case .noFeed: served = nil
        // No render to spare: what the refusal read of the generation is enough, and is kept
        // until it changes, so this key is not read again meanwhile.
        case .busy(let refused): served = refused.served
        }
        watched.withLock { $0[key] = served }
        return served
    }

    /// Forgets what keys nobody waits on any more served.
    private func forgetUnwatched(keeping keys: Set<FeedResponseCache.Key>) {
        watched.withLock { watched in
            for key in watched.keys where !keys.contains(key) { watched.removeValue(forKey: key) }
        }
    }

    /// Tells the streams of `key` that had a generation that there is none now (a DELETE, or
    /// nothing readable), once: the next generation is sent to them again.
    private func sendGone(toStreamsOf key: FeedResponseCache.Key) {
        let now = MonotonicClock.nanos()
        let streams = subscribers.withLock { subscribers -> [EventStream] in
            var due: [EventStream] = []
            for (id, subscriber) in subscribers where subscriber.key == key && subscriber.lastFingerprint != nil {
                subscribers[id]?.lastFingerprint = nil
                subscribers[id]?.lastWriteNanos = now
                due.append(subscriber.stream)
            }
            return due
        }
        for stream in streams { stream.send(Array("event: gone\ndata: {}\n\n".utf8)) }
    }

    /// Sends the served generation to the streams of `key` that have not seen it.
    private func send(_ served: Served, toStreamsOf key: FeedResponseCache.Key) {
        let now = MonotonicClock.nanos()
        let streams = subscribers.withLock { subscribers -> [EventStream] in
            var due: [EventStream] = []
            for (id, subscriber) in subscribers
            where subscriber.key == key && subscriber.lastFingerprint != served.fingerprint {
                subscribers[id]?.lastFingerprint = served.fingerprint
                subscribers[id]?.lastWriteNanos = now
                due.append(subscriber.stream)
            }
            return due
        }
        guard !streams.isEmpty else { return }
        let event = Self.generationEvent(served)
        for stream in streams { stream.send(event) }
    }

    /// `id: <fingerprint>`, `event: generation`, `data: {"generationId","fingerprint","generatedAtEpochMs"}`.
    static func generationEvent(_ entry: Served) -> [UInt8] {
        var data = Array("{\"generationId\":".utf8)
        CompactJSON.writeString(entry.generationId, to: &data)
        data.append(
            contentsOf: ",\"fingerprint\":\"\(entry.fingerprint)\",\"generatedAtEpochMs\":\(entry.generatedAtEpochMs)}"
                .utf8)
        return Array("id: \(entry.fingerprint)\nevent: generation\ndata: ".utf8) + data + Array("\n\n".utf8)
    }

    private func heartbeat(now: Int64) {
        let due = subscribers.withLock { subscribers -> [EventStream] in
            var streams: [EventStream] = []
            for (id, subscriber) in subscribers where now - subscriber.lastWriteNanos >= Self.heartbeatNanos {
                subscribers[id]?.lastWriteNanos = now
                streams.append(subscriber.stream)
            }
            return streams
        }
        for stream in due { stream.send(Array(": heartbeat\n\n".utf8)) }
    }

    /// Forgets streams whose client left (noticed when a heartbeat or event could not be written).
    private func dropFinishedStreams() {
        let dropped = subscribers.withLock { subscribers -> Int in
            let finished = subscribers.filter { $0.value.stream.isFinished }.map(\.key)
            for key in finished { subscribers.removeValue(forKey: key) }
            return finished.count
        }
        if dropped > 0 { metrics.openWaiters.subtract(dropped, ordering: .relaxed) }
    }

    private func wake(where condition: (Waiter) -> Bool) {
        let woken = waiting.withLock { waiting -> [Suspension] in
            let matches = waiting.filter { condition($0.value) }
            for id in matches.keys { waiting.removeValue(forKey: id) }
            return matches.values.map(\.suspension)
        }
        guard !woken.isEmpty else { return }
        metrics.openWaiters.subtract(woken.count, ordering: .relaxed)
        for waiter in woken { waiter.wake() }
    }
}
