import FeedStore

/// The problems of a multipart publish's parts, its images, and its platform-limit check.
extension Problem {
    /// 400 for a multipart publish with two `payload` parts.
    static var repeatedPayloadPart: Problem {
        .badRequest("malformed-multipart", "Malformed multipart body", "More than one 'payload' part.")
    }

    /// 400 for a multipart publish without a `payload` part.
    static var missingPayloadPart: Problem {
        .badRequest(
            "missing-payload", "Missing payload",
            "A multipart publish needs a part named 'payload' holding the JSON payload.")
    }

    /// 503 when libvips could not start a thread or allocate memory: the publish is not made
    /// (a 201 without its images would look like the images were bad).
    static func imagingUnavailable(_ reason: String) -> Problem {
        busy(
            "The server could not get the threads or memory to decode the images (\(reason)); nothing was "
                + "published. Try again in a moment.", retryAfterSeconds: 2)
    }

    /// 400 for an asset name that is not a safe name.
    static func invalidAssetName(_ name: String, reason: String) -> Problem {
        .badRequest(
            "invalid-asset-name", "Invalid asset name",
            "Asset name '\(name)' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..').")
    }

    /// 422 under `strict=true`, or for an archive's assets stored as they are, when assets do not
    /// fit the budget; the latter names `?images=pack`, which packs them instead.
    static func assetsRejected(_ skipped: [AssetBudget.Skipped], archiveAsIs: Bool = false) -> Problem {
        let why =
            archiveAsIs
            ? "An archive's assets are stored as they are, all or nothing, and \(skipped.count) could not be: "
            : "strict=true and \(skipped.count) asset(s) could not be stored: "
        let help =
            archiveAsIs
            ? " Add ?images=pack to pack them under the budget (maxDimension, maxBytes, budgetBytes, quality)." : ""
        var problem = Problem(
            status: 422, type: "assets-rejected", title: "Assets do not fit",
            detail: why + skipped.map { "\($0.name): \($0.reason)" }.joined(separator: "; ")
                + ". Nothing was published." + help)
        problem.extensions = [("skipped", AssetUpload.skippedJSON(skipped))]
        return problem
    }

    /// `lint=strict` with warnings: 422, nothing written, the warnings in the problem document.
    static func platformLimits(_ report: LintReport) -> Problem {
        let shown = report.warnings.prefix(3)
        let more = report.total - shown.count
        var problem = Problem(
            status: 422, type: "platform-limits", title: "The feed breaks platform limits",
            detail: "lint=strict and \(report.total) warning(s): "
                + shown.map { "\($0.code.rawValue): \($0.detail)" }.joined(separator: " ")
                + (more > 0 ? " And \(more) more (see warnings)." : "") + " Nothing was published.")
        problem.extensions = PublishLint.members(report).map { ($0.name, $0.value) }
        return problem
    }
}
