import FeedStore

/// `GET`, `HEAD` and `PUT /feeds/{group}`.
struct FeedRoutes: Sendable {
    let store: FeedStore
    let cache: FeedResponseCache

    /// The route table entry.
    var route: Route {
        Route(prefix: "feeds", parameterCount: 1, methods: [
            "GET": { read($0) },
            "PUT": { publish($0) },
        ])
    }

    // MARK: GET / HEAD

    func read(_ routed: RoutedRequest) -> HTTPResponse {
        let group = routed.parameters[0]
        if let problem = groupProblem(group) { return problem.response }
        let schemaVersion: Int?
        switch SchemaVersionParameter.parse(header: nil, query: routed.request.query["schemaVersion"]) {
        case .failure(let problem): return problem.response
        case .success(let version): schemaVersion = version
        }
        switch cache.lookup(.init(group: group, schemaVersion: schemaVersion)) {
        case .feed(let entry):
            let notModified = Conditional.ifNoneMatch(routed.request.headers["If-None-Match"], matches: entry.entityTag)
            return HTTPResponse(prepared: notModified ? entry.notModified : entry.ok)
        case .noFeed(let read):
            return noFeedProblem(group: group, schemaVersion: schemaVersion, read: read).response
        }
    }

    private func noFeedProblem(group: String, schemaVersion: Int?, read: FeedRead) -> Problem {
        let filter = schemaVersion.map { " with schemaVersion \($0)" } ?? ""
        var detail = "Group '\(group)' has no readable generation\(filter)."
        if !read.skipped.isEmpty {
            detail += " Skipped: " + read.skipped.map { "\($0.id) (\($0.reason))" }.joined(separator: "; ") + "."
        }
        return Problem(status: 404, type: "no-feed", title: "No feed", detail: detail)
    }

    // MARK: PUT

    func publish(_ routed: RoutedRequest) -> HTTPResponse {
        let request = routed.request
        let group = routed.parameters[0]
        if let problem = groupProblem(group) { return problem.response }
        guard request.mediaType == "application/json" else {
            return Problem(status: 415, type: "unsupported-media-type", title: "Unsupported media type",
                           detail: "Send the payload with Content-Type: application/json (got \(request.headers["Content-Type"] ?? "none")).",
                           headers: [("Accept-Put", "application/json")]).response
        }
        let schemaVersion: Int
        switch SchemaVersionParameter.parse(header: request.headers["X-Schema-Version"], query: request.query["schemaVersion"]) {
        case .failure(let problem): return problem.response
        case .success(let version): schemaVersion = version ?? 1
        }
        do {
            let result = try store.publish(group: group, payloadJSON: request.body, schemaVersion: schemaVersion)
            return publishedResponse(group, result)
        } catch {
            return PublishProblems.problem(for: error).response
        }
    }

    private func publishedResponse(_ group: String, _ result: PublishResult) -> HTTPResponse {
        var members = [JSONMember("result", .string("unchanged"))]
        var status = 200
        var headers = [("ETag", Conditional.entityTag(result.fingerprint)), ("Cache-Control", "no-store")]
        if case .published(_, _, let assetBytes) = result {
            members = [JSONMember("result", .string("published"))]
            members.append(contentsOf: [JSONMember("generationId", .string(result.generationId)),
                                        JSONMember("fingerprint", .string(result.fingerprint)),
                                        JSONMember("assetBytes", .number(String(assetBytes)))])
            status = 201
            headers.append(("Location", "/feeds/\(group)"))
        } else {
            members.append(contentsOf: [JSONMember("generationId", .string(result.generationId)),
                                        JSONMember("fingerprint", .string(result.fingerprint))])
        }
        var body = CompactJSON.bytes(.object(members))
        body.append(0x0A)
        return .json(status, body, headers: headers)
    }

    private func groupProblem(_ group: String) -> Problem? {
        guard let reason = SafeName.problem(with: group) else { return nil }
        return .badRequest("invalid-group-name", "Invalid group name",
                           "Group name '\(group)' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..').")
    }
}

/// Publish failures as problem details.
enum PublishProblems {
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
        case .storage(let fileError) where fileError.kind == .noSpace:
            return Problem(status: 507, type: "insufficient-storage", title: "Insufficient storage",
                           detail: "The disk is full (\(fileError)); nothing was published and the previous feed is still served.")
        case .storage(let fileError):
            return Problem(status: 500, type: "storage-failure", title: "Storage failure",
                           detail: "Writing the generation failed (\(fileError)); nothing was published and the previous feed is still served.")
        }
    }
}

/// The `schemaVersion` query parameter and `X-Schema-Version` header.
enum SchemaVersionParameter {
    /// The version given (nil when neither is present), or a 400 problem.
    static func parse(header: String?, query: String?) -> Result<Int?, Problem> {
        var found: Int?
        for (source, text) in [("X-Schema-Version header", header), ("schemaVersion parameter", query)] {
            guard let text else { continue }
            guard let value = Int32(text.trimmingSpaces()), value >= 0 else {
                return .failure(.badRequest("invalid-schema-version", "Invalid schema version",
                                            "The \(source) must be an integer from 0 to 2147483647 (got '\(text)')."))
            }
            if let earlier = found, earlier != Int(value) {
                return .failure(.badRequest("invalid-schema-version", "Conflicting schema versions",
                                            "The X-Schema-Version header (\(earlier)) and schemaVersion parameter (\(value)) differ."))
            }
            found = Int(value)
        }
        return .success(found)
    }
}
