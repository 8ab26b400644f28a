import FeedStore

/// The problems of feed reads, publishes, deletes and their parameters.
extension Problem {
    /// 400 for a group name that is not a safe name, or reserved.
    static func invalidGroupName(_ group: String, reason: String) -> Problem {
        .badRequest(
            "invalid-group-name", "Invalid group name",
            "Group name '\(group)' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..').")
    }

    /// 404 for a group with no readable generation (for the filter given).
    static func noFeed(group: String, schemaVersion: Int?, read: FeedRead) -> Problem {
        let filter = schemaVersion.map { " with schemaVersion \($0)" } ?? ""
        var detail = "Group '\(group)' has no readable generation\(filter)."
        if let skipped = FeedRendering.skippedSummary(read, group: group, schemaVersion: schemaVersion) {
            detail += " Skipped: " + skipped + "."
        }
        return Problem(status: 404, type: "no-feed", title: "No feed", detail: detail)
    }

    /// 404 for a group with no readable generation (for the filter given), without the reasons.
    static func noFeed(group: String, schemaVersion: Int?) -> Problem {
        Problem(
            status: 404, type: "no-feed", title: "No feed",
            detail:
                "Group '\(group)' has no readable generation\(schemaVersion.map { " with schemaVersion \($0)" } ?? "")."
        )
    }

    /// 400 for an `If-Match` that is neither `*` nor a list of entity tags.
    static func invalidIfMatch(_ value: String) -> Problem {
        .badRequest(
            "invalid-precondition", "Invalid If-Match", "If-Match takes * or quoted entity tags (got '\(value)').")
    }

    /// 412 naming the condition of `precondition` that does not hold for the served generation
    /// (fingerprint `served`, nil: no feed); the generic one without a precondition.
    static func preconditionFailed(served: String?, precondition: WritePrecondition?) -> Problem {
        var problem = Problem(PublishError.preconditionFailed(servedFingerprint: served))
        guard let failing = precondition.flatMap({ Self.failing($0, served: served) }) else { return problem }
        let state = served.map { "the served generation has fingerprint \($0)" } ?? "the group has no feed"
        let condition =
            switch failing {
            case .servedFingerprint(let tags): "If-Match names \(tags.count == 1 ? "another tag" : "other tags")"
            case .anyFeed: "If-Match: * asks for a group with a feed"
            case .noFeed: "If-None-Match: * asks for a group with no feed"
            case .all: "the preconditions do not all hold"
            }
        problem.detail = "\(condition), and \(state); nothing was changed."
        return problem
    }

    /// The first condition in `precondition` that does not hold when the served fingerprint is `served`.
    private static func failing(_ precondition: WritePrecondition, served: String?) -> WritePrecondition? {
        switch precondition {
        case .servedFingerprint(let tags): served.map { tags.contains($0) } == true ? nil : precondition
        case .anyFeed: served == nil ? precondition : nil
        case .noFeed: served == nil ? nil : precondition
        case .all(let conditions): conditions.lazy.compactMap { failing($0, served: served) }.first
        }
    }

    /// 400 for an `If-None-Match` other than `*` on a write.
    static var invalidIfNoneMatchOnWrite: Problem {
        .badRequest(
            "invalid-precondition", "Invalid If-None-Match",
            "On writes, If-None-Match takes only * (write only if the group has no feed).")
    }

    /// 404 for a group folder that does not exist.
    static func noGroup(_ group: String) -> Problem { .notFound("There is no group '\(group)'.") }

    /// 503 when `--max-waiters` long-polls and streams are open already.
    static var tooManyWaiters: Problem {
        Problem(
            status: 503, type: "too-many-waiters", title: "Too many waiting clients",
            detail:
                "The server holds as many long-polls and event streams as it allows (--max-waiters); poll without "
                + "waiting, or try again shortly.",
            headers: [("Retry-After", "5")])
    }

    /// 415 for a publish body that is neither JSON nor multipart.
    static func unsupportedPublishType(_ sent: String?) -> Problem {
        Problem(
            status: 415, type: "unsupported-media-type", title: "Unsupported media type",
            detail:
                "Send the payload as application/json, or as multipart/form-data with a 'payload' part and one file "
                + "part per asset (got \(sent ?? "no Content-Type")).",
            headers: [("Accept-Put", "application/json, multipart/form-data")])
    }

    /// 413 for a JSON payload over `--max-payload-bytes`.
    static func jsonPayloadTooLarge(bytes: Int, limit: Int) -> Problem {
        .payloadTooLarge("The JSON payload has \(bytes) bytes; the limit is \(limit) (--max-payload-bytes).")
    }

    /// 400 for a query parameter or header value that cannot be read.
    static func invalidParameter(_ detail: String) -> Problem {
        .badRequest("invalid-parameter", "Invalid parameter", detail)
    }

    /// 400 for a required parameter that is missing.
    static func missingParameter(_ detail: String) -> Problem {
        .badRequest("invalid-parameter", "Missing parameter", detail)
    }

    /// 400 for a group name that is not a safe name (the timeline's wording).
    static func notASafeGroupName(_ group: String) -> Problem {
        .badRequest("invalid-group-name", "Invalid group name", "Group name '\(group)' is not a safe name.")
    }

    /// 422 for a timeline pointer that names no non-empty array.
    /// 422 for a timeline whose entries would repeat more item bytes than a feed may hold.
    static func timelineTooLarge(bytes: Int, limit: Int, hours: Int) -> Problem {
        Problem(
            status: 422, type: "timeline-too-large", title: "Timeline too large",
            detail: "The \(hours) entries would hold \(bytes) bytes of items, more than \(limit) "
                + "(--max-payload-bytes): ask for fewer hours, or point items at smaller values.")
    }

    /// 422 for a timeline with no items pointer: no profile, no parameter, nothing to infer.
    static func noItemsToShow(_ detail: String) -> Problem {
        Problem(status: 422, type: "no-items", title: "No items at that pointer", detail: detail)
    }

    static func noItems(pointer: String, generation: String) -> Problem {
        Problem(
            status: 422, type: "no-items", title: "No items at that pointer",
            detail:
                "\(pointer.isEmpty ? "\"\" (the whole payload)" : pointer) does not name an array in the payload of "
                + "\(generation).")
    }

    /// 400 for a schema version that is not a 32-bit non-negative integer.
    static func invalidSchemaVersion(source: String, text: String) -> Problem {
        .badRequest(
            "invalid-schema-version", "Invalid schema version",
            "The \(source) must be an integer from 0 to 2147483647 (got '\(text)').")
    }

    /// 422 for a header and a parameter that name different schema versions.
    static func conflictingSchemaVersions(header: Int, query: Int) -> Problem {
        // Each is well-formed; together they contradict each other: 422, not 400.
        Problem(
            status: 422, type: "conflicting-schema-versions", title: "Conflicting schema versions",
            detail:
                "The X-Schema-Version header (\(header)) and schemaVersion parameter (\(query)) differ; send one, "
                + "or the same value in both."
        )
    }

    /// The problem for a publish or delete the store refused.
    init(_ error: PublishError) {
        switch error {
        case .invalidGroupName(let name, let reason):
            self = .badRequest("invalid-group-name", "Invalid group name", "Group name '\(name)' \(reason).")
        case .invalidAssetName(let name, let reason):
            self = .badRequest("invalid-asset-name", "Invalid asset name", "Asset name '\(name)' \(reason).")
        case .duplicateAssetName(let name):
            self = .badRequest(
                "duplicate-asset-name", "Duplicate asset name", "Asset name '\(name)' appears more than once.")
        case .invalidPayload(let parseError):
            self = .invalidJSON(parseError, title: "Invalid JSON payload", subject: "payload")
        case .unencodablePayload(let detail):
            self = .badRequest("invalid-json", "Invalid JSON payload", detail)
        case .feedTooLarge(let bytes, let limit):
            self = .payloadTooLarge(
                "The feed.json this publish would write (payload, envelope and asset list) has \(bytes) bytes; the "
                    + "limit for writing and reading one is \(limit) (--max-payload-bytes)."
            )
        case .storage(let fileError, let outcome):
            self = .storage(fileError, outcome: outcome)
        case .preconditionFailed(let served):
            self = Problem(
                status: 412, type: "precondition-failed", title: "Precondition failed",
                detail: served.map {
                    "The write's precondition does not hold: the served generation has fingerprint \($0) (If-Match "
                        + "names other tags, or If-None-Match: * asks for a group with no feed); nothing was changed."
                }
                    ?? "The write's precondition does not hold: the group has no feed (If-Match asks for one); nothing "
                    + "was changed.")
            if let served { headers = [("ETag", Conditional.entityTag(served))] }
        case .groupLocked(let waited):
            self = Problem(
                status: 409, type: "group-locked", title: "Group locked by another writer",
                detail: "Another writer held the group's lock (a publish in progress, a fault-lab hold, or another "
                    + "process on this root) for the \((waited + 999) / 1000) s a write waits for it; nothing was "
                    + "written. Retry in a moment.",
                headers: [("Retry-After", "1")])
        }
    }

    /// 400 for JSON that does not parse, with where and why as members.
    static func invalidJSON(_ error: JSONParseError, title: String, subject: String) -> Problem {
        var problem = Problem.badRequest(
            "invalid-json", title, "The \(subject) is not valid JSON: \(error.reason) at byte \(error.offset).")
        problem.extensions = [("offset", .number(String(error.offset))), ("reason", .string(error.reason))]
        return problem
    }

    /// 507 for a full disk, 500 for another file-system failure, saying what readers get now.
    static func storage(_ fileError: FileSystemError, outcome: StorageOutcome) -> Problem {
        // The error's path is relative to the root (the store made it so): safe to show.
        let consequence =
            switch outcome {
            case .unchanged: "nothing was changed and readers get what they got before."
            case .visibleNotDurable:
                "the change is visible to readers but could not be flushed to disk, so it may not survive a crash; "
                    + "read the feed to see what is served."
            }
        if fileError.kind == .noSpace {
            return Problem(
                status: 507, type: "insufficient-storage", title: "Insufficient storage",
                detail: "The disk is full (\(fileError)); \(consequence)")
        }
        return Problem(
            status: 500, type: "storage-failure", title: "Storage failure",
            detail: "A file-system operation failed (\(fileError)); \(consequence)")
    }
}
