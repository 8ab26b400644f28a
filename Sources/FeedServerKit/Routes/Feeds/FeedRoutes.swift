import ConcurrencyPrimitives
import FeedImaging
import FeedStore
import HTTPTransport

/// `/feeds/{group}`: read (with its long-poll and prepared answer) and delete, the event stream,
/// and the route table of the feed family (publish, listings and warnings live beside it).
struct FeedRoutes: Sendable {
    let store: FeedStore
    let cache: FeedResponseCache
    let encoder: VipsImageEncoder
    let imagingThreads: Int
    let metrics: Metrics
    let waiters: Waiters
    /// `--max-body-bytes`: the largest multipart publish.
    let maxBodyBytes: Int
    /// Rendered `/generations` answers, revalidated against the group folder.
    let listings = ListingCache<FolderOnly>()
    /// Rendered `/warnings` answers, made with the group's profile.
    let warningsCache = ListingCache<WarningsInputs>()
    /// The platform-limit check every publish answer reports (`--android-screen`).
    let lint: FeedLint
    /// Decodes a multipart publish's images while its body arrives (nil: after it).
    var prefetcher: ImagePrefetcher? = nil
    /// `--fault-lab`: writes to a group it holds are refused at once (nil: no lab).
    var lab: FaultLab? = nil
    /// The memory budget bodies kept in memory count against (the transport's), which a publish
    /// also counts its parse against (nil: not counted).
    var memory: InflightBudget? = nil
    /// Where a publish's lint runs while the publish writes (nil: on the publishing thread).
    var lintPool: WorkPool? = nil

    /// Refuses a write to `group` that would wait out a fault-lab hold.
    func refuseIfHeld(_ group: String) throws(Problem) {
        try lab?.refuseWrites(to: group, waitNanos: store.configuration.lockWaitMs &* 1_000_000)
    }

    /// The template of a feed's read and publish route.
    static let readTemplate = "/feeds/{group}"

    /// The route table entries.
    var routes: [Route] {
        [
            Route("/feeds", methods: ["GET": { _ in list() }], offloaded: ["GET"]),
            Route(
                Self.readTemplate,
                methods: [
                    "GET": { routed throws(Problem) in try read(routed) },
                    "PUT": { routed throws(Problem) in try publish(routed) },
                    "DELETE": { routed throws(Problem) in try clear(routed) },
                ], bodies: ["PUT": publishBodies], offloaded: ["GET", "PUT", "DELETE"],
                answeredFromMemory: { isInMemory($0) }, prepared: { preparedRead($0) },
                laneOf: { Self.carriesImages($0) ? .images : .main }),
            Route(
                "/feeds/{group}/generations", methods: ["GET": { routed throws(Problem) in try generations(routed) }],
                offloaded: ["GET"]),
            Route("/feeds/{group}/events", methods: ["GET": { routed throws(Problem) in try events(routed) }]),
            Route(
                "/feeds/{group}/warnings", methods: ["GET": { routed throws(Problem) in try warnings(routed) }],
                offloaded: ["GET"]),
        ]
    }

    // MARK: GET / HEAD

    func read(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try readTarget(routed)
        let wait = try ReadParameters.waitSeconds(routed.request.query["wait"])
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        switch cache.lookup(key) {
        case .feed(let entry):
            let notModified = known(routed.request, waits: wait != nil, entry.entityTag)
            // Long-poll (Consul-style): with ?wait and a current ETag, hold the request until the
            // feed changes or the wait ends; then answer as usual (200 or 304), counted then.
            if notModified, let wait, !routed.request.resumed {
                guard let suspension = waiters.park(key: key, entityTag: entry.entityTag, seconds: wait) else {
                    throw Problem.tooManyWaiters
                }
                return .suspend(suspension)
            }
            count(entry, notModified: notModified)
            if wait == nil { return notModified ? entry.notModified : entry.ok }
            return notModified ? entry.notModifiedAfterWait : entry.okAfterWait
        case .noFeed(let read):
            cache.reads.countNotFound(group: group)
            throw Problem.noFeed(group: group, schemaVersion: schemaVersion, read: read)
        case .busy(let refused):
            // No body to spare, but a client holding the served generation needs none.
            guard known(routed.request, waits: wait != nil, refused.entityTag) else {
                throw Problem.rendersLimit(refused.limit)
            }
            if let wait, !routed.request.resumed {
                guard let suspension = waiters.park(key: key, entityTag: refused.entityTag, seconds: wait) else {
                    throw Problem.tooManyWaiters
                }
                return .suspend(suspension)
            }
            if wait == nil { return refused.notModified }
            // Built per request: a refusal is not kept.
            return FeedResponseCache.Entry.unstored(refused.notModified, prepared: nil)
        }
    }

    /// Whether the client holds the served generation: its `If-None-Match` says so, or, on a
    /// long-poll without one, `?etag=`. A cache in front forwards the query but not always the
    /// header: Varnish drops `If-None-Match` from the fetch it makes on a miss, and a wait that
    /// lost it would be answered at once, over and over.
    private func known(_ request: HTTPRequest, waits: Bool, _ entityTag: String) -> Bool {
        guard waits, let known = request.query["etag"], request.headers["If-None-Match"] == nil else {
            return Conditional.ifNoneMatch(in: request.headers, matches: entityTag)
        }
        return Conditional.ifNoneMatch(ReadParameters.entityTag(known), matches: entityTag)
    }

    /// Whether a request is a publish with images (multipart), which runs on the images lane.
    static func carriesImages(_ routed: RoutedRequest) -> Bool {
        routed.request.method == "PUT" && routed.request.mediaType == "multipart/form-data"
    }

    /// Whether a read is answered without the disk: its entry (or its remembered absence) is
    /// current, or its parameters are refused. Any other read runs on the work pool, since
    /// reading a group can mean reading and parsing whole generations.
    func isInMemory(_ routed: RoutedRequest) -> Bool {
        guard routed.request.method == "GET" || routed.request.method == "HEAD" else { return false }
        guard let (group, schemaVersion) = try? readTarget(routed) else { return true }
        return cache.isAnsweredFromMemory(.init(group: group, schemaVersion: schemaVersion))
    }

    /// A cached read of a plain `/feeds/{group}` (no query) from its prepared answer; nil when
    /// the entry is not cached, not current, or its answer not built yet by a routed read.
    func preparedRead(_ request: PreparedRequest) -> PreparedAnswer? {
        let name = request.parameter(0)
        guard SafeName.isGroupName(bytes: name) else { return nil }
        guard let entry = cache.current(.init(group: String(decoding: name, as: UTF8.self), schemaVersion: nil)) else {
            return nil
        }
        let notModified = Conditional.ifNoneMatch(cString: request.head.ifNoneMatch, matches: entry.entityTag)
        // The prepared handle and the figures straight from the entry: copying a whole
        // HTTPResponse here would retain and release its headers and body on every read.
        let prepared = notModified ? entry.notModifiedPrepared : entry.okPrepared
        guard let handle = prepared.existingHandle else { return nil }
        count(entry, notModified: notModified)
        return PreparedAnswer(
            owner: prepared, handle: handle, status: notModified ? 304 : 200,
            bodyBytes: notModified ? 0 : entry.body.bytes.count)
    }

    /// Counts a read answered with `entry` (both ways of answering a read pass here): for
    /// `GET /journal/reads`, and as a fallback served for `/metrics`.
    private func count(_ entry: FeedResponseCache.Entry, notModified: Bool) {
        entry.reads.count(notModified: notModified, fallback: entry.isFallback)
        if entry.isFallback { metrics.recordFallbackServed() }
    }

    // MARK: DELETE

    func clear(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = try Self.validGroup(routed.parameters[0])
        try refuseIfHeld(group)
        let headers = routed.request.headers
        let precondition = try Conditional.writePrecondition(
            ifMatch: headers["If-Match"], ifNoneMatch: headers["If-None-Match"])
        let removed: Generation?
        do {
            removed = try store.clear(group: group, precondition: precondition)
        } catch {
            throw Problem(error)
        }
        var answer = HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
        answer.annotation = JournalFacts(
            result: removed == nil ? "nothing" : "deleted", generationId: removed?.id, fingerprint: removed?.fingerprint
        )
        return answer
    }

    // MARK: Server-Sent Events

    /// `GET /feeds/{group}/events`: an event `generation` per change (id = fingerprint), the
    /// current one at once unless `Last-Event-ID` names it, a comment heartbeat every 15 s.
    func events(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try readTarget(routed)
        // `no-store`: a stream is one client's, and a cache that buffered it to store it would hold
        // its events back.
        if routed.request.method == "HEAD" {
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")])
        }
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        guard let stream = waiters.subscribe(key: key, lastEventID: routed.request.headers["Last-Event-ID"]) else {
            throw Problem.tooManyWaiters
        }
        var response = HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                ("X-Accel-Buffering", "no"),
            ])
        response.body = .stream(stream)
        return response
    }

    // MARK: The group

    /// The group and optional `schemaVersion` filter of a read.
    func readTarget(_ routed: RoutedRequest) throws(Problem) -> (group: String, schemaVersion: Int?) {
        let group = try Self.validGroup(routed.parameters[0])
        return (group, try ReadParameters.schemaVersion(header: nil, query: routed.request.query["schemaVersion"]))
    }

    /// `group` when it can name a group.
    static func validGroup(_ group: String) throws(Problem) -> String {
        if let reason = SafeName.groupProblem(with: group) { throw Problem.invalidGroupName(group, reason: reason) }
        return group
    }
}
