import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import Synchronization

/// Rendered read responses per group and schema filter, revalidated on every request by
/// `FeedStore.isCurrent` (no JSON is parsed on a hit), within a budget of bytes.
///
/// Another process may publish into the same root, so the cache never trusts its own
/// invalidation alone: the on-disk token decides. Keys of one group that serve the same
/// generation share one render; a generation's payload document, made for a timeline, counts
/// against the budget too. Past the budget the least recently used entries go; a render larger
/// than the whole budget is answered and not kept.
///
/// Renders the cache let go live on while answers still being sent hold them: they are found
/// again by identity (shared, not rendered twice) and counted. While they hold the outside limit
/// (half as many bytes as the budget, at least 16 MiB), a read needing a new render is refused as busy.
final class FeedResponseCache: Sendable {
    /// What is cached per group and schema filter.
    struct Key: Hashable, Sendable {
        var group: String
        var schemaVersion: Int?
    }

    /// The result of a lookup.
    enum Lookup {
        case feed(Entry)
        case noFeed(FeedRead)
        /// A new render would pass the outside limit; try again later.
        case busy(Refusal)
    }

    /// The default budget, in bytes (`--read-cache-bytes`).
    static let defaultBudgetBytes = 64 << 20

    private struct State {
        var entries: [Key: Entry] = [:]
        var rendered: [RenderedGeneration.Identity: RenderedGeneration] = [:]
        /// Renders let go while answers may still hold them.
        var released: [RenderedGeneration.Identity: ReleasedRender] = [:]
        /// How many `released` may hold before the freed ones are swept (doubling, so sweeps stay
        /// linear in the renders let go).
        var releasedSweepAt = 64
        /// Bytes of every render the entries hold.
        var bytes = 0
        /// Bytes of the bodies of `rendered` (the ledger's share inside the cache).
        var bodyBytes = 0
        var clock: UInt64 = 0
    }

    private let store: FeedStore
    private let state = Lock(State())
    /// Keys with no readable generation, so a waiter on one (an unused `schemaVersion`, a group
    /// that does not exist) does not re-read the group on every check.
    private let missing = Lock<[Key: Miss]>([:])
    /// A key found with no readable generation is read again at most this often, sooner when
    /// its pointer or `generations/` changed.
    static let missRecheckNanos: Int64 = 1_000_000_000

    private struct Miss {
        let token: ChangeToken
        let read: FeedRead
        let checkedAtNanos: Int64
    }
    private let budgetBytes: Int
    /// Most bytes of render bodies alive outside the cache before a new render is refused.
    let outsideLimitBytes: Int
    /// Every render body alive, in the cache or held by answers in flight.
    let ledger = RenderLedger()
    /// Keys refused as busy, so they are not read again while nothing changed.
    private let refusals: RefusalMemo
    /// A render this small is admitted past the outside limit, within `smallRenderReserveBytes`:
    /// one stalled reader of a large feed must not refuse every small feed's first read.
    static let smallRenderBytes = 64 << 10
    /// How far past the outside limit small renders may go together (stalled readers of many
    /// distinct small feeds are bounded too).
    static let smallRenderReserveBytes = 8 << 20
    private let capacity: Int
    /// The `Cache-Control` of every answer (`ReadCaching`).
    private let cacheControl: String
    /// The clock read on hits (an atomic load, no write shared between threads).
    private let clock = Atomic<UInt64>(0)

    /// Where reads of each served generation are counted.
    let reads: ReadCounts
    /// Groups read from the disk (a lookup neither an entry nor a remembered absence answered).
    let groupReads = Atomic<Int>(0)

    /// The least `outsideLimitBytes` is by default, whatever the budget.
    static let minimumOutsideBytes = 16 << 20

    /// A cache over `store` holding at most `budgetBytes` of renders in at most `capacity` entries,
    /// and refusing new renders while `outsideLimitBytes` of those it let go are still held.
    init(
        store: FeedStore, budgetBytes: Int = defaultBudgetBytes, outsideLimitBytes: Int? = nil, capacity: Int = 4096,
        caching: ReadCaching = .shared, reads: ReadCounts = ReadCounts(since: SystemClock().nowEpochMs())
    ) {
        self.store = store
        self.reads = reads
        self.budgetBytes = max(0, budgetBytes)
        // Half the budget: renders slow readers hold stay below the cache's own share, so stalled
        // readers and the other budgets together stay bounded (docs/architecture.md, Memory).
        self.outsideLimitBytes = outsideLimitBytes ?? max(budgetBytes / 2, Self.minimumOutsideBytes)
        refusals = RefusalMemo(capacity: capacity)
        self.capacity = capacity
        cacheControl = caching.feeds
    }

    /// Bytes the cache holds now (renders and payload documents).
    var heldBytes: Int { state.withLock { $0.bytes } }

    /// The cached responses for a key when they are still current; nil on a miss (nothing is
    /// rendered here, so a caller on libmicrohttpd's threads never reads a whole feed).
    func current(_ key: Key) -> Entry? {
        guard let entry = state.withLock({ $0.entries[key] }) else { return nil }
        if store.isCurrent(entry.token) {
            entry.lastUse.store(clock.load(ordering: .relaxed), ordering: .relaxed)
            return entry
        }
        // Dropped at once: the check that found it stale may have been the one an interval
        // allows (the served feed.json's), so asking again could wrongly say current.
        state.withLock { state in
            if state.entries[key] === entry { Self.remove(key, from: &state) }
        }
        return nil
    }

    /// Whether what `token` (an entry's) was taken from is still what the store serves (its
    /// probes, no read). When it is not, the entry holding it is dropped at once: the check that
    /// found it stale may have been the one an interval allows (the served feed.json's), so the
    /// next `lookup` asking again could wrongly find it current.
    func isCurrent(_ token: ChangeToken, of key: Key) -> Bool {
        if store.isCurrent(token) { return true }
        state.withLock { state in
            if state.entries[key]?.token === token { Self.remove(key, from: &state) }
        }
        return false
    }

    /// Whether `lookup` would answer `key` from memory: a current entry, or a remembered absence
    /// still within its recheck interval.
    func isAnsweredFromMemory(_ key: Key) -> Bool {
        if current(key) != nil { return true }
        if standingRefusal(key) != nil { return true }
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
        if let refused = standingRefusal(key) { return .busy(refused) }
        groupReads.add(1, ordering: .relaxed)
        let snapshot = store.snapshot(group: key.group, schemaVersion: key.schemaVersion)
        guard let generation = snapshot.read.served else {
            state.withLock { Self.remove(key, from: &$0) }
            missing.withLock { missing in
                if missing.count >= capacity { missing.removeAll(keepingCapacity: true) }
                missing[key] = Miss(token: snapshot.token, read: snapshot.read, checkedAtNanos: now)
            }
            return .noFeed(snapshot.read)
        }
        missing.withLock { _ = $0.removeValue(forKey: key) }
        guard let entry = keep(key, generation, snapshot) else {
            let refused = refusal(key, generation, snapshot)
            refusals.remember(refused, for: key)
            return .busy(refused)
        }
        refusals.forget(key)
        return .feed(entry)
    }

    /// The refusal remembered for `key` while it still stands: its generation is still served
    /// and there is still no room for its render.
    private func standingRefusal(_ key: Key) -> Refusal? {
        guard let refused = refusals.refusal(key) else { return nil }
        guard store.isCurrent(refused.token) else {
            // Forgotten at once: the check that found it stale may have been the one an interval
            // allows (the served feed.json's), so asking again could wrongly say current.
            refusals.forget(key)
            return nil
        }
        return state.withLock { admits(refused.estimate, $0) } ? nil : refused
    }

    /// What a busy answer can still say of `generation`, the one `key` serves.
    private func refusal(_ key: Key, _ generation: Generation, _ snapshot: FeedSnapshot) -> Refusal {
        var notModified = HTTPResponse(status: 304, headers: headers(key, generation, snapshot))
        notModified.body = .lengthOnly(FeedRendering.length(group: key.group, generation: generation))
        let served = ServedFacts(
            token: snapshot.token, entityTag: Conditional.entityTag(generation.fingerprint),
            fingerprint: generation.fingerprint, generationId: generation.id,
            generatedAtEpochMs: generation.generatedAtEpochMs)
        return Refusal(
            limit: outsideLimitBytes, served: served, notModified: notModified,
            estimate: RenderedGeneration.estimatedBytes(of: generation))
    }

    /// The entry `key` serves (rendered on a miss); a 404 when none is readable, a 503 when a new
    /// render would pass the outside limit.
    func served(_ key: Key) throws(Problem) -> Entry {
        switch lookup(key) {
        case .feed(let entry): return entry
        case .noFeed(let read): throw Problem.noFeed(group: key.group, schemaVersion: key.schemaVersion, read: read)
        case .busy(let refused): throw Problem.rendersLimit(refused.limit)
        }
    }

    /// The payload of `entry`'s generation as a document (timelines), counted against the budget.
    func payload(of entry: Entry) throws(JSONParseError) -> JSONDocument {
        let (document, made) = try entry.rendered.payload()
        if made {
            state.withLock { state in
                guard state.rendered[entry.rendered.identity] === entry.rendered else { return }
                state.bytes += document.footprint
                evict(&state)
            }
        }
        return document
    }

    /// The element positions of the array at `pointer` in `entry`'s payload (nil: none there),
    /// walked once per generation and pointer, counted against the budget.
    func elementPositions(of entry: Entry, pointer: JSONPointer, key: String, in payload: JSONDocument) -> [UInt32]? {
        let (positions, added) = entry.rendered.elementPositions(pointer, key: key, in: payload)
        if added > 0 {
            state.withLock { state in
                guard state.rendered[entry.rendered.identity] === entry.rendered else { return }
                state.bytes += added
                evict(&state)
            }
        }
        return positions
    }

    /// Drops every entry and forgets every render let go (at shutdown, once no answer is sent any
    /// more): the weak references to those renders go with them, whose side tables LeakSanitizer
    /// cannot tell from leaks (docs/testing.md).
    func empty() {
        state.withLock { $0 = State() }
        missing.withLock { $0.removeAll() }
    }

    /// Drops every entry of `group` (after a publish, delete or fault through this server: the
    /// next read renders what is current, and a deleted feed's bytes are given back at once).
    func forget(group: String) {
        state.withLock { state in
            for key in state.entries.keys where key.group == group { Self.remove(key, from: &state) }
        }
        missing.withLock { missing in
            for key in missing.keys where key.group == group { missing.removeValue(forKey: key) }
        }
        refusals.forget(group: group)
    }

    /// Renders (or shares the render of) `generation` for `key` and keeps it within the budget;
    /// nil when a new render would pass the outside limit.
    private func keep(_ key: Key, _ generation: Generation, _ snapshot: FeedSnapshot) -> Entry? {
        let identity = RenderedGeneration.Identity(
            group: key.group, generationId: generation.id, fingerprint: generation.fingerprint)
        // Rendered outside the lock (a copy of the whole payload); another thread may render the
        // same generation meanwhile, and then its render is shared instead.
        guard let candidate = shared(identity) ?? render(key.group, generation) else { return nil }
        let headers = headers(key, generation, snapshot)
        let tally = reads.tally(group: key.group, generationId: generation.id)
        return state.withLock { state in
            let rendered = state.rendered[identity] ?? candidate
            let entry = Entry(
                token: snapshot.token, generation: generation, rendered: rendered, headers: headers,
                read: snapshot.read, reads: tally)
            Self.remove(key, from: &state)
            guard rendered.footprint <= budgetBytes else {  // answered, not kept
                Self.release(rendered, in: &state)
                return entry
            }
            if state.entries.count >= capacity, let oldest = Self.leastRecentlyUsed(state) {
                Self.remove(oldest, from: &state)
            }
            state.clock += 1
            clock.store(state.clock, ordering: .relaxed)
            entry.lastUse.store(state.clock, ordering: .relaxed)
            state.entries[key] = entry
            if state.rendered[identity] == nil {
                state.rendered[identity] = rendered
                state.released.removeValue(forKey: identity)
                state.bytes += rendered.footprint
                state.bodyBytes += rendered.body.bytes.count
            }
            evict(&state)
            return entry
        }
    }

    /// The render of `identity` the cache holds, or one it let go that an answer still holds.
    private func shared(_ identity: RenderedGeneration.Identity) -> RenderedGeneration? {
        state.withLock { state in
            guard let known = state.rendered[identity] else {
                return state.released[identity].flatMap(RenderedGeneration.init(reviving:))
            }
            return known
        }
    }

    /// Counts `bytes` more in the ledger when they fit beside the bodies outside the cache.
    func admit(_ bytes: Int) -> Bool {
        state.withLock { state -> Bool in
            guard admits(bytes, state) else { return false }
            ledger.add(bytes)
            return true
        }
    }

    /// Whether a new render of about `estimate` bytes fits beside the bodies outside the cache
    /// (one alone is always allowed, however large; a small one within the reserve past the limit).
    private func admits(_ estimate: Int, _ state: State) -> Bool {
        let outside = ledger.liveBytes - state.bodyBytes
        guard outside > 0 else { return true }
        let limit =
            estimate <= Self.smallRenderBytes ? outsideLimitBytes + Self.smallRenderReserveBytes : outsideLimitBytes
        return outside + estimate <= limit
    }

    /// A new render of `generation`, its bytes reserved first; nil when renders outside the cache
    /// already hold the outside limit.
    private func render(_ group: String, _ generation: Generation) -> RenderedGeneration? {
        let estimate = RenderedGeneration.estimatedBytes(of: generation)
        guard admit(estimate) else { return nil }
        return RenderedGeneration(group: group, generation: generation, ledger: ledger, reserved: estimate)
    }

    private func headers(_ key: Key, _ generation: Generation, _ snapshot: FeedSnapshot) -> [(String, String)] {
        // nosniff in the 304's headers too: a cache that freshens the stored 200 with them keeps it.
        var headers = [
            ("ETag", Conditional.entityTag(generation.fingerprint)), ("Cache-Control", cacheControl),
            ("X-Content-Type-Options", "nosniff"), ("X-Feed-Generation", generation.id),
        ]
        if let fallback = FeedRendering.fallbackHeader(
            snapshot.read, group: key.group, schemaVersion: key.schemaVersion)
        {
            headers.append(("X-Feed-Fallback", fallback))
        }
        return headers
    }

    /// Removes least recently used entries until the renders fit the budget.
    private func evict(_ state: inout State) {
        while state.bytes > budgetBytes, let oldest = Self.leastRecentlyUsed(state) {
            Self.remove(oldest, from: &state)
        }
    }

    private static func leastRecentlyUsed(_ state: State) -> Key? {
        state.entries.min { $0.value.lastUse.load(ordering: .relaxed) < $1.value.lastUse.load(ordering: .relaxed) }?.key
    }

    /// Removes `key`'s entry, and its render's bytes when no other entry shares it.
    private static func remove(_ key: Key, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: key) else { return }
        let identity = entry.rendered.identity
        guard state.rendered[identity] === entry.rendered else { return }
        if !state.entries.values.contains(where: { $0.rendered === entry.rendered }) {
            state.rendered.removeValue(forKey: identity)
            state.bytes -= entry.rendered.footprint
            state.bodyBytes -= entry.rendered.body.bytes.count
            release(entry.rendered, in: &state)
        }
    }

    /// Remembers a render the cache does not keep, so answers still holding it can be shared;
    /// forgets those already freed once there are many.
    private static func release(_ render: RenderedGeneration, in state: inout State) {
        if state.released.count >= state.releasedSweepAt {
            state.released = state.released.filter { $0.value.body != nil }
            state.releasedSweepAt = max(64, 2 * state.released.count)
        }
        state.released[render.identity] = render.released
    }
}
