import FeedImaging
import FeedStore
import ConcurrencyPrimitives
import HTTPTransport

/// `/feeds`, `/feeds/{group}` (read, publish, clear) and `/feeds/{group}/generations`.
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
    let listings = ListingCache()
    /// The platform-limit check every publish answer reports (`--android-screen`).
    let lint: FeedLint

    /// Longest long-poll wait, in seconds (longer requests are capped).
    static let maxWaitSeconds = 60.0

    /// The route table entries.
    /// The template of a feed's read and publish route.
    static let readTemplate = "/feeds/{group}"

    var routes: [Route] {
        [
            Route("/feeds", methods: ["GET": { _ in list() }], offloaded: ["GET"]),
            Route(Self.readTemplate, methods: [
                "GET": { read($0) },
                "PUT": { publish($0) },
                "DELETE": { clear($0) },
            ], bodies: ["PUT": publishBodies], offloaded: ["PUT", "DELETE"], prepared: { preparedRead($0) }),
            Route("/feeds/{group}/generations", methods: ["GET": { generations($0) }], offloaded: ["GET"]),
            Route("/feeds/{group}/events", methods: ["GET": { events($0) }]),
            Route("/feeds/{group}/warnings", methods: ["GET": { warnings($0) }]),
        ]
    }

    // MARK: GET / HEAD

    func read(_ routed: RoutedRequest) -> HTTPResponse {
        let group: String, schemaVersion: Int?
        switch readTarget(routed) {
        case .failure(let problem): return problem.response
        case .success(let target): (group, schemaVersion) = target
        }
        let wait: Double?
        switch Self.waitSeconds(routed.request.query["wait"]) {
        case .failure(let problem): return problem.response
        case .success(let seconds): wait = seconds
        }
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        switch cache.lookup(key) {
        case .feed(let entry):
            let notModified = answered(entry, ifNoneMatch: Conditional.ifNoneMatch(in: routed.request.headers, matches: entry.entityTag))
            // Long-poll (Consul-style): with ?wait and a current ETag, hold the request until the
            // feed changes or the wait ends; then answer as usual (200 or 304).
            if notModified, let wait, !routed.request.resumed {
                guard let suspension = waiters.park(key: key, entityTag: entry.entityTag, seconds: wait) else { return Self.tooManyWaiters.response }
                return .suspend(suspension)
            }
            return notModified ? entry.notModified : entry.ok
        case .noFeed(let read):
            return noFeedProblem(group: group, schemaVersion: schemaVersion, read: read).response
        }
    }

    /// A cached read of a plain `/feeds/{group}` (no query) from its prepared answer; nil when
    /// the entry is not cached, not current, or its answer not built yet by a routed read.
    func preparedRead(_ request: PreparedRequest) -> PreparedAnswer? {
        let name = request.parameter(0)
        guard SafeName.isGroupName(bytes: name) else { return nil }
        guard let entry = cache.current(.init(group: String(decoding: name, as: UTF8.self), schemaVersion: nil)) else { return nil }
        let notModified = Conditional.ifNoneMatch(cString: request.head.ifNoneMatch, matches: entry.entityTag)
        // The prepared handle and the figures straight from the entry: copying a whole
        // HTTPResponse here would retain and release its headers and body on every read.
        let prepared = notModified ? entry.notModifiedPrepared : entry.okPrepared
        guard let handle = prepared.existingHandle else { return nil }
        _ = answered(entry, ifNoneMatch: notModified)
        return PreparedAnswer(
            owner: prepared, handle: handle, status: notModified ? 304 : 200, bodyBytes: notModified ? 0 : entry.body.bytes.count)
    }

    /// Whether a read of `entry` is answered `304`, counting a fallback served (both ways of
    /// answering a read pass here).
    private func answered(_ entry: FeedResponseCache.Entry, ifNoneMatch matches: Bool) -> Bool {
        if entry.isFallback { metrics.recordFallbackServed() }
        return matches
    }

    private func noFeedProblem(group: String, schemaVersion: Int?, read: FeedRead) -> Problem {
        let filter = schemaVersion.map { " with schemaVersion \($0)" } ?? ""
        var detail = "Group '\(group)' has no readable generation\(filter)."
        if let skipped = FeedRendering.skippedSummary(read, group: group, schemaVersion: schemaVersion) {
            detail += " Skipped: " + skipped + "."
        }
        return Problem(status: 404, type: "no-feed", title: "No feed", detail: detail)
    }

    // MARK: PUT

    /// What a publish takes, judged from the head: a JSON payload up to the feed.json limit, or
    /// a multipart body up to `--max-body-bytes`.
    private var publishBodies: BodyPolicy {
        BodyPolicy(
            limits: ["application/json": store.configuration.maxFeedBytes, "multipart/form-data": maxBodyBytes],
            unsupported: { sent in Self.unsupportedMediaType(sent) },
            tooLarge: { [maxFeedBytes = store.configuration.maxFeedBytes] bytes, limit in
                limit == maxFeedBytes
                    ? PublishProblems.payloadTooLarge("The JSON payload has \(bytes) bytes; the limit is \(limit) (--max-payload-bytes).")
                    : Problem(status: 413, type: "body-too-large", title: "Request body too large",
                              detail: "The request body has \(bytes) bytes; the limit is \(limit) (--max-body-bytes).")
            })
    }

    static func unsupportedMediaType(_ sent: String?) -> Problem {
        Problem(status: 415, type: "unsupported-media-type", title: "Unsupported media type",
                detail: "Send the payload as application/json, or as multipart/form-data with a 'payload' part and one file part per asset (got \(sent ?? "no Content-Type")).",
                headers: [("Accept-Put", "application/json, multipart/form-data")])
    }

    /// What every publish reads from its request line and head, checked before any state is
    /// looked at (400 before 412).
    struct PublishParameters {
        /// From `X-Schema-Version` or `?schemaVersion=` (nil: neither).
        var schemaVersion: Int?
        var uploadOptions: AssetUpload.Options
        var lintMode: PublishLint.Mode
        var precondition: WritePrecondition?
    }

    /// The group name and publish parameters of a request, or the 400 for the first bad one.
    func publishParameters(_ routed: RoutedRequest) -> Result<(String, PublishParameters), Problem> {
        let request = routed.request
        let group = routed.parameters[0]
        if let problem = groupProblem(group) { return .failure(problem) }
        do throws(Problem) {
            let schemaVersion = try SchemaVersionParameter.parse(header: request.headers["X-Schema-Version"], query: request.query["schemaVersion"]).get()
            let uploadOptions = try AssetUpload.options(from: request.query).get()
            let lintMode = try PublishLint.mode(from: request.query).get()
            let precondition = try Conditional.writePrecondition(ifMatch: request.headers["If-Match"], ifNoneMatch: request.headers["If-None-Match"]).get()
            return .success((group, PublishParameters(schemaVersion: schemaVersion, uploadOptions: uploadOptions, lintMode: lintMode, precondition: precondition)))
        } catch {
            return .failure(error)
        }
    }

    func publish(_ routed: RoutedRequest) -> HTTPResponse {
        let request = routed.request
        let group: String, parameters: PublishParameters
        switch publishParameters(routed) {
        case .failure(let problem): return problem.response
        case .success(let parsed): (group, parameters) = parsed
        }
        let upload: AssetUpload
        switch request.mediaType {
        case "application/json":
            if request.body.count > store.configuration.maxFeedBytes {
                return payloadTooLarge(request.body.count)
            }
            upload = AssetUpload(payload: request.body, packing: AssetBudget.Result())
        case "multipart/form-data":
            switch AssetUpload.prepare(parts: request.parts ?? [], options: parameters.uploadOptions, encoder: encoder, threads: imagingThreads) {
            case .failure(let problem): return problem.response
            case .success(let prepared): upload = prepared
            }
            if upload.payload.count > store.configuration.maxFeedBytes { return payloadTooLarge(upload.payload.count) }
        default:
            return Self.unsupportedMediaType(request.headers["Content-Type"]).response
        }
        return commit(group: group, upload: upload, schemaVersion: parameters.schemaVersion ?? 1, parameters: parameters)
    }

    /// The end of every HTTP publish: lint (422 under `lint=strict`), write, count, answer.
    func commit(group: String, upload: AssetUpload, schemaVersion: Int, parameters: PublishParameters) -> HTTPResponse {
        let warnings = PublishLint.warnings(payload: upload.payload, packing: upload.packing, lint: lint, limits: store.configuration.payloadLimits)
        if parameters.lintMode == .strict, !warnings.isEmpty {
            metrics.recordWarnings(warnings)
            return PublishLint.strictProblem(warnings).response
        }
        let started = MonotonicClock.nanos()
        do {
            let result = try store.publish(group: group, payloadJSON: upload.payload, schemaVersion: schemaVersion,
                                           assets: upload.assetInputs, precondition: parameters.precondition)
            var changed = false
            if case .published = result { changed = true }
            metrics.recordPublish(seconds: Double(MonotonicClock.nanos() - started) / 1e9, changed: changed)
            metrics.recordWarnings(warnings)
            return publishedResponse(group, result, packing: upload.packing, warnings: warnings)
        } catch {
            return PublishProblems.problem(for: error).response
        }
    }

    // MARK: DELETE

    func clear(_ routed: RoutedRequest) -> HTTPResponse {
        let group = routed.parameters[0]
        if let problem = groupProblem(group) { return problem.response }
        let request = routed.request
        switch Conditional.writePrecondition(ifMatch: request.headers["If-Match"], ifNoneMatch: request.headers["If-None-Match"]) {
        case .failure(let problem): return problem.response
        case .success(let precondition):
            do {
                try store.clear(group: group, precondition: precondition)
                return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
            } catch {
                return PublishProblems.problem(for: error).response
            }
        }
    }

    // MARK: Server-Sent Events

    /// `GET /feeds/{group}/events`: an event `generation` per change (id = fingerprint), the
    /// current one at once unless `Last-Event-ID` names it, a comment heartbeat every 15 s.
    func events(_ routed: RoutedRequest) -> HTTPResponse {
        let group: String, schemaVersion: Int?
        switch readTarget(routed) {
        case .failure(let problem): return problem.response
        case .success(let target): (group, schemaVersion) = target
        }
        if routed.request.method == "HEAD" {
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        }
        guard let stream = waiters.subscribe(key: .init(group: group, schemaVersion: schemaVersion),
                                             lastEventID: routed.request.headers["Last-Event-ID"]) else { return Self.tooManyWaiters.response }
        var response = HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
        ])
        response.body = .stream(stream)
        return response
    }

    /// 503 when `--max-waiters` long-polls and streams are open already.
    static let tooManyWaiters = Problem(
        status: 503, type: "too-many-waiters", title: "Too many waiting clients",
        detail: "The server holds as many long-polls and event streams as it allows (--max-waiters); poll without waiting, or try again shortly.",
        headers: [("Retry-After", "5")])

    // MARK: Listings

    func list() -> HTTPResponse {
        let groups: [JSONValue] = store.groups().map { group in
            // Through the read cache: a listing costs one `lstat` per group while nothing changed.
            var served: FeedResponseCache.Entry?
            if case .feed(let entry) = cache.lookup(.init(group: group, schemaVersion: nil)) { served = entry }
            return .object([
                JSONMember("group", .string(group)),
                JSONMember("generationId", served.map { .string($0.generationId) } ?? .null),
                JSONMember("fingerprint", served.map { .string($0.fingerprint) } ?? .null),
                JSONMember("generatedAtEpochMs", served.map { .number(String($0.generatedAtEpochMs)) } ?? .null),
                JSONMember("schemaVersion", served.map { .number(String($0.schemaVersion)) } ?? .null),
                JSONMember("url", .string("/feeds/\(group)")),
            ])
        }
        return .json(200, CompactJSON.bytes(.object([JSONMember("groups", .array(groups))])) + [0x0A], headers: [("Cache-Control", "no-cache")])
    }

    func generations(_ routed: RoutedRequest) -> HTTPResponse {
        let group: String, schemaVersion: Int?
        switch readTarget(routed) {
        case .failure(let problem): return problem.response
        case .success(let target): (group, schemaVersion) = target
        }
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        if let cached = listings.lookup(key, isCurrent: store.isCurrent) { return cached }
        let token = store.folderToken(group: group)
        guard let statuses = store.generations(group: group, schemaVersion: schemaVersion) else {
            return Problem.notFound("There is no group '\(group)'.").response
        }
        let faults = store.injectedFaults(group: group)
        let entries: [JSONValue] = statuses.map { status in
            var members = [JSONMember("id", .string(status.id)), JSONMember("state", .string(status.state.rawValue)),
                           JSONMember("reason", status.reason.map { .string($0) } ?? .null)]
            if let generation = status.generation {
                members += [
                    JSONMember("schemaVersion", .number(String(generation.schemaVersion))),
                    JSONMember("generatedAtEpochMs", .number(String(generation.generatedAtEpochMs))),
                    JSONMember("fingerprint", .string(generation.fingerprint)),
                    JSONMember("assets", .number(String(generation.assets.count))),
                    JSONMember("assetBytes", .number(String(generation.assets.reduce(0) { $0 + $1.bytes }))),
                ]
            }
            if let fault = faults.first(where: { $0.folder == status.id }) { members.append(JSONMember("fault", FaultRoutes.json(fault))) }
            return .object(members)
        }
        let served = statuses.first { $0.state == .served }?.id
        let body = CompactJSON.bytes(.object([
            JSONMember("group", .string(group)),
            JSONMember("served", served.map { .string($0) } ?? .null),
            JSONMember("generations", .array(entries)),
            JSONMember("faults", .array(faults.map { FaultRoutes.json($0) })),
        ]))
        let response = HTTPResponse.json(200, body + [0x0A], headers: [("Cache-Control", "no-cache")])
        listings.store(key, response, token: token)
        return response
    }

    func payloadTooLarge(_ size: Int) -> HTTPResponse {
        PublishProblems.payloadTooLarge("The JSON payload has \(size) bytes; the limit is \(store.configuration.maxFeedBytes) (--max-payload-bytes).").response
    }

    private func publishedResponse(_ group: String, _ result: PublishResult, packing: AssetBudget.Result, warnings: LintReport) -> HTTPResponse {
        let published: Bool
        if case .published = result { published = true } else { published = false }
        let assets: [JSONValue] = packing.packed.map { packed in
            .object([
                JSONMember("name", .string(packed.name)),
                JSONMember("bytes", .number(String(packed.image.bytes.count))),
                JSONMember("width", .number(String(packed.image.width))),
                JSONMember("height", .number(String(packed.image.height))),
                JSONMember("decodedBytes", .number(String(packed.image.decodedBytes))),
                JSONMember("url", .string(FeedRendering.assetURL(group: group, generation: result.generationId, name: packed.name))),
            ])
        }
        let members = [
            JSONMember("result", .string(published ? "published" : "unchanged")),
            JSONMember("generationId", .string(result.generationId)),
            JSONMember("fingerprint", .string(result.fingerprint)),
            JSONMember("assetBytes", .number(String(packing.totalBytes))),
            JSONMember("decodedBytes", .number(String(packing.totalDecodedBytes))),
            JSONMember("assets", .array(assets)),
            JSONMember("skipped", AssetUpload.skippedJSON(packing.skipped)),
        ] + PublishLint.members(warnings)
        var body = CompactJSON.bytes(.object(members))
        body.append(0x0A)
        var headers = [("ETag", Conditional.entityTag(result.fingerprint)), ("Cache-Control", "no-store")]
        if published { headers.append(("Location", "/feeds/\(group)")) }
        return .json(published ? 201 : 200, body, headers: headers)
    }

    /// `?wait=<seconds>` capped at 60 s, plus up to 1/16 of it as jitter so that waiters parked
    /// together do not all come back in the same instant; nil without `wait`.
    static func waitSeconds(_ text: String?) -> Result<Double?, Problem> {
        guard let text else { return .success(nil) }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
            return .failure(.badRequest("invalid-parameter", "Invalid parameter", "wait must be a number of seconds, 0 or more (got '\(text)')."))
        }
        let capped = min(seconds, Self.maxWaitSeconds)
        return .success(capped + Double.random(in: 0...(capped / 16)))
    }

    /// The group and optional `schemaVersion` filter of a read, or the 400 for either.
    func readTarget(_ routed: RoutedRequest) -> Result<(String, Int?), Problem> {
        let group = routed.parameters[0]
        if let problem = groupProblem(group) { return .failure(problem) }
        return SchemaVersionParameter.parse(header: nil, query: routed.request.query["schemaVersion"]).map { (group, $0) }
    }

    func groupProblem(_ group: String) -> Problem? {
        guard let reason = SafeName.groupProblem(with: group) else { return nil }
        return .badRequest("invalid-group-name", "Invalid group name",
                           "Group name '\(group)' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..').")
    }
}

/// Publish failures as problem details.
enum PublishProblems {
    /// 413 for a payload (or the feed.json made from it) beyond `--max-payload-bytes`.
    static func payloadTooLarge(_ detail: String) -> Problem { .payloadTooLarge(detail) }

    /// 507 for an upload the server could not store.
    static func uploadNotStored(reason: String) -> Problem { .uploadNotStored(reason: reason) }

    static func problem(for error: PublishError) -> Problem {
        switch error {
        case .invalidGroupName(let name, let reason):
            return .badRequest("invalid-group-name", "Invalid group name", "Group name '\(name)' \(reason).")
        case .invalidAssetName(let name, let reason):
            return .badRequest("invalid-asset-name", "Invalid asset name", "Asset name '\(name)' \(reason).")
        case .duplicateAssetName(let name):
            return .badRequest("duplicate-asset-name", "Duplicate asset name", "Asset name '\(name)' appears more than once.")
        case .invalidPayload(let parseError):
            var problem = Problem.badRequest("invalid-json", "Invalid JSON payload",
                                             "The payload is not valid JSON: \(parseError.reason) at byte \(parseError.offset).")
            problem.extensions = [("offset", .number(String(parseError.offset))), ("reason", .string(parseError.reason))]
            return problem
        case .unencodablePayload(let detail):
            return .badRequest("invalid-json", "Invalid JSON payload", detail)
        case .feedTooLarge(let bytes, let limit):
            return payloadTooLarge("The feed.json this publish would write (payload, envelope and asset list) has \(bytes) bytes; the limit for writing and reading one is \(limit) (--max-payload-bytes).")
        case .storage(let fileError, let outcome):
            // The error's path is relative to the root (the store made it so): safe to show.
            let consequence = switch outcome {
            case .unchanged: "nothing was changed and readers get what they got before."
            case .visibleNotDurable: "the change is visible to readers but could not be flushed to disk, so it may not survive a crash; read the feed to see what is served."
            }
            if fileError.kind == .noSpace {
                return Problem(status: 507, type: "insufficient-storage", title: "Insufficient storage",
                               detail: "The disk is full (\(fileError)); \(consequence)")
            }
            return Problem(status: 500, type: "storage-failure", title: "Storage failure",
                           detail: "A file-system operation failed (\(fileError)); \(consequence)")
        case .preconditionFailed(let served):
            var problem = Problem(status: 412, type: "precondition-failed", title: "Precondition failed",
                                  detail: served.map { "The served generation has fingerprint \($0); nothing was changed." }
                                      ?? "The group has no feed; nothing was changed.")
            if let served { problem.headers = [("ETag", Conditional.entityTag(served))] }
            return problem
        }
    }
}

/// The `schemaVersion` query parameter and `X-Schema-Version` header.
enum SchemaVersionParameter {
    /// The version given (nil when neither is present), or a 400 problem.
    static func parse(header: String?, query: String?) -> Result<Int?, Problem> {
        if header == nil, query == nil { return .success(nil) }  // every plain read
        var found: Int?
        for (source, text) in [("X-Schema-Version header", header), ("schemaVersion parameter", query)] {
            guard let text else { continue }
            guard let value = Int32(text.trimmingSpaces()), value >= 0 else {
                return .failure(.badRequest("invalid-schema-version", "Invalid schema version",
                                            "The \(source) must be an integer from 0 to 2147483647 (got '\(text)')."))
            }
            if let earlier = found, earlier != Int(value) {
                // Each is well-formed; together they contradict each other: 422, not 400.
                return .failure(Problem(status: 422, type: "conflicting-schema-versions", title: "Conflicting schema versions",
                                        detail: "The X-Schema-Version header (\(earlier)) and schemaVersion parameter (\(value)) differ; send one, or the same value in both."))
            }
            found = Int(value)
        }
        return .success(found)
    }
}

/// Rendered `/feeds/{group}/generations` answers. Each is revalidated on use by the group's
/// folder token (`current.json`, `generations/` and the fault record, one `lstat` each), and
/// re-rendered at least once a second, so a generation damaged in place shows up too.
final class ListingCache: Sendable {
    private struct Rendered {
        let response: HTTPResponse
        let token: ChangeToken
        let renderedAtNanos: Int64
    }

    private let entries = Lock<[FeedResponseCache.Key: Rendered]>([:])
    private let capacity = 1024
    /// Longest time an answer is reused without re-reading the folder.
    static let maxAgeNanos: Int64 = 1_000_000_000

    /// The cached answer, when its folder has not changed and it is young enough.
    func lookup(_ key: FeedResponseCache.Key, isCurrent: (ChangeToken) -> Bool) -> HTTPResponse? {
        guard let rendered = entries.withLock({ $0[key] }),
              MonotonicClock.nanos() - rendered.renderedAtNanos < Self.maxAgeNanos, isCurrent(rendered.token) else { return nil }
        return rendered.response
    }

    /// Keeps an answer rendered from a folder whose token (taken before reading it) is `token`.
    func store(_ key: FeedResponseCache.Key, _ response: HTTPResponse, token: ChangeToken) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Rendered(response: response, token: token, renderedAtNanos: MonotonicClock.nanos())
        }
    }
}
