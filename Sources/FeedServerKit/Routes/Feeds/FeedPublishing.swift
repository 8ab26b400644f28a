import FeedStore
import HTTPTransport

/// `PUT /feeds/{group}`: a JSON or multipart publish, linted, written, answered.
extension FeedRoutes {
    /// What a publish takes, judged from the head: a JSON payload up to the feed.json limit, or
    /// a multipart body up to `--max-body-bytes`, whose images start decoding as they arrive.
    var publishBodies: BodyPolicy {
        var observer: (@Sendable (RoutedRequest) -> (any MultipartPartObserver)?)?
        if let prefetcher {
            observer = { [self] head in
                // Only for a publish its head will not refuse: the decodes would be wasted.
                guard let (group, parameters) = try? publishParameters(head), !parameters.uploadOptions.raw,
                    (try? refuseIfHeld(group)) != nil
                else { return nil }
                return UploadPrefetch(batch: prefetcher.batch(budget: parameters.uploadOptions.budget))
            }
        }
        return BodyPolicy(
            limits: ["application/json": store.configuration.maxFeedBytes, "multipart/form-data": maxBodyBytes],
            unsupported: { sent in .unsupportedPublishType(sent) },
            tooLarge: { [maxFeedBytes = store.configuration.maxFeedBytes] bytes, limit in
                limit == maxFeedBytes
                    ? .jsonPayloadTooLarge(bytes: bytes, limit: limit) : .bodyTooLarge(bytes: bytes, limit: limit)
            },
            parts: observer, head: { [self] head throws(Problem) in _ = try publishParameters(head) })
    }

    /// What every publish reads from its request line and head, checked before any state is
    /// looked at (400 before 412).
    struct PublishParameters {
        /// From `X-Schema-Version` or `?schemaVersion=` (nil: neither).
        var schemaVersion: Int?
        /// The image budget and its switches.
        var uploadOptions: AssetUpload.Options
        /// `?lint=`.
        var lintMode: PublishLint.Mode
        /// `If-Match` / `If-None-Match`.
        var precondition: WritePrecondition?
    }

    /// The group name and publish parameters of a request; the first bad one is thrown.
    func publishParameters(_ routed: RoutedRequest) throws(Problem) -> (group: String, parameters: PublishParameters) {
        let request = routed.request
        let group = try Self.validGroup(routed.parameters[0])
        try KnownParameters.publish.check(request.query)
        let schemaVersion = try ReadParameters.schemaVersion(
            header: request.headers["X-Schema-Version"], query: request.query["schemaVersion"])
        let uploadOptions = try AssetUpload.options(from: request.query)
        let lintMode = try PublishLint.mode(from: request.query)
        let precondition = try Conditional.writePrecondition(
            ifMatch: request.headers["If-Match"], ifNoneMatch: request.headers["If-None-Match"])
        let parameters = PublishParameters(
            schemaVersion: schemaVersion, uploadOptions: uploadOptions, lintMode: lintMode, precondition: precondition)
        return (group, parameters)
    }

    func publish(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let request = routed.request
        let (group, parameters) = try publishParameters(routed)
        try refuseIfHeld(group)
        let maxFeedBytes = store.configuration.maxFeedBytes
        let upload: AssetUpload
        switch request.mediaType {
        case "application/json":
            upload = AssetUpload(payload: request.body, packing: AssetBudget.Result())
        case "multipart/form-data":
            upload = try AssetUpload.prepare(
                parts: request.parts ?? [], options: parameters.uploadOptions, encoder: encoder,
                threads: imagingThreads,
                prefetch: (request.partObserver as? UploadPrefetch)?.batch
            )
        default:
            throw Problem.unsupportedPublishType(request.headers["Content-Type"])
        }
        guard upload.payload.count <= maxFeedBytes else {
            throw Problem.jsonPayloadTooLarge(bytes: upload.payload.count, limit: maxFeedBytes)
        }
        // The transport counted the body (or payload part) against the memory budget as it arrived.
        return try commit(
            group: group, upload: upload, schemaVersion: parameters.schemaVersion ?? 1, parameters: parameters,
            counted: TransportSettings.memoryCost(ofBodyBytes: upload.payload.count))
    }

    /// The lint, write and answer every publish shares, with this server's store and settings.
    var committer: PublishCommit { PublishCommit(store: store, lint: lint) }

    /// The end of every HTTP publish: lint (422 under `lint=strict`), write, count, answer.
    /// `counted`: what the payload already holds of the memory budget (counted by the transport as
    /// the body arrived, or before an archive's was read).
    func commit(
        group: String, upload: AssetUpload, schemaVersion: Int, parameters: PublishParameters, counted: Int
    ) throws(Problem)
        -> HTTPResponse
    {
        let parsing = try reserveParse(of: upload.payload, counted: counted)
        defer { memory?.release(parsing) }
        let committed = try committer.commit(
            group: group, upload: upload, schemaVersion: schemaVersion, strict: parameters.lintMode == .strict,
            precondition: parameters.precondition, beside: lintPool, linted: { metrics.recordWarnings($0) },
            wrote: { metrics.recordPublish(seconds: $0, changed: $1) })
        let published = committed.result.changed
        var headers = [("ETag", Conditional.entityTag(committed.result.fingerprint)), ("Cache-Control", "no-store")]
        if published { headers.append(("Location", "/feeds/\(group)")) }
        var answer = HTTPResponse.json(
            published ? 201 : 200, PublishCommit.answer(group: group, committed, packing: upload.packing),
            headers: headers)
        answer.annotation = committed.journalFacts(schemaVersion: schemaVersion, payload: upload.payload)
        return answer
    }

    /// Counts what parsing and publishing `payload` will hold beyond the `counted` bytes it holds
    /// already; 503 when other requests hold the memory budget. The bytes counted, to give back.
    private func reserveParse(of payload: [UInt8], counted: Int) throws(Problem) -> Int {
        guard let memory else { return 0 }
        let more = max(0, JSONMemoryEstimate.peakBytes(of: payload) - counted)
        // Nearly alone, a publish goes ahead however dense its JSON: one of the largest accepted
        // size must fit, beside a slow client's few bytes too.
        guard memory.reserve(more, nearlyAloneHolding: counted) else { throw Problem.memoryLimit(memory.limit) }
        return more
    }
}
