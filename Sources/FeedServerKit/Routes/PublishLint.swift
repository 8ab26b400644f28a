import FeedStore

/// The platform-limit check of a publish (`?lint=`), and warnings as JSON (docs/widget-limits.md).
enum PublishLint {
    /// What a warning does to the publish.
    enum Mode: Equatable {
        /// Reported in the answer; the publish goes ahead (the default).
        case warn
        /// Any warning makes the publish a 422 and nothing is written.
        case strict
    }

    /// `lint=warn` (default) or `lint=strict`; anything else is a 400.
    static func mode(from query: RequestFields) -> Result<Mode, Problem> {
        switch query["lint"] {
        case nil, "warn": return .success(.warn)
        case "strict": return .success(.strict)
        case let other?:
            return .failure(.badRequest("invalid-parameter", "Invalid parameter", "lint must be 'warn' or 'strict' (got '\(other)')."))
        }
    }

    /// The warnings for what a publish is about to write. Recomputed on every publish, an
    /// unchanged one included, since they depend only on its content and the server's settings.
    /// Empty when the payload is not JSON: the store then refuses it with a 400.
    static func warnings(payload: [UInt8], packing: AssetBudget.Result, lint: FeedLint, limits: JSONLimits) -> [LintWarning] {
        guard let value = try? JSONParser.parse(payload, limits: limits) else { return [] }
        let assets = packing.packed.map { FeedLint.Asset(name: $0.name, width: $0.image.width, height: $0.image.height) }
        var skipped: [String: String] = [:]
        for entry in packing.skipped where skipped[entry.name] == nil { skipped[entry.name] = entry.reason }
        return lint.warnings(payload: value, assets: assets, skipped: skipped)
    }

    /// `lint=strict` with warnings: 422, nothing written, the warnings in the problem document.
    static func strictProblem(_ warnings: [LintWarning]) -> Problem {
        var problem = Problem(status: 422, type: "platform-limits", title: "The feed breaks platform limits",
                              detail: "lint=strict and \(warnings.count) warning(s): "
                                  + warnings.map { "\($0.code.rawValue): \($0.detail)" }.joined(separator: " ") + " Nothing was published.")
        problem.extensions = [("warnings", json(warnings))]
        return problem
    }

    /// `[{"code","detail","asset"?,"limit"?,"actual"?,"pointer"?}]`.
    static func json(_ warnings: [LintWarning]) -> JSONValue {
        .array(warnings.map { warning in
            var members = [JSONMember("code", .string(warning.code.rawValue)), JSONMember("detail", .string(warning.detail))]
            if let asset = warning.asset { members.append(JSONMember("asset", .string(asset))) }
            if let limit = warning.limit { members.append(JSONMember("limit", .number(String(limit)))) }
            if let actual = warning.actual { members.append(JSONMember("actual", .number(String(actual)))) }
            if let pointer = warning.pointer { members.append(JSONMember("pointer", .string(pointer))) }
            return .object(members)
        })
    }
}
