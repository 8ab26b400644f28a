import FeedStore
import HTTPTransport

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
    static func mode(from query: RequestFields) throws(Problem) -> Mode {
        switch query["lint"] {
        case nil, "warn": return .warn
        case "strict": return .strict
        case let other?: throw Problem.invalidParameter("lint must be 'warn' or 'strict' (got '\(other)').")
        }
    }

    /// Warnings spelled out in one answer; the rest are counted (`warningsOmitted`), so an answer
    /// stays small whatever the payload names (like the bounded `X-Feed-Fallback`).
    static let maxListed = 100

    /// The warnings for what a publish is about to write. Recomputed on every publish, an
    /// unchanged one included, since they depend only on its content and the server's settings.
    /// Empty when the payload is not JSON: the store then refuses it with a 400.
    /// `profile`: the group's stated one; without it, one is inferred from the payload.
    static func warnings(
        payload: [UInt8], packing: AssetBudget.Result, lint: FeedLint, limits: JSONLimits, profile: WidgetProfile?
    ) -> LintReport {
        warnings(
            document: try? JSONDocument.parse(payload, limits: limits), packing: packing, lint: lint, profile: profile)
    }

    /// The same for a payload parsed already (nil: it is not JSON).
    static func warnings(
        document: JSONDocument?, packing: AssetBudget.Result, lint: FeedLint, profile: WidgetProfile?
    ) -> LintReport {
        guard let value = document?.root else { return LintReport(limit: maxListed) }
        let assets = packing.packed.map {
            FeedLint.Asset(name: $0.name, width: $0.image.width, height: $0.image.height)
        }
        var skipped: [String: String] = [:]
        for entry in packing.skipped where skipped[entry.name] == nil { skipped[entry.name] = entry.reason }
        let applied = LintProfile.applying(stated: profile, payload: value, assetNames: assets.map(\.name))
        return lint.report(payload: value, assets: assets, skipped: skipped, limit: maxListed, profile: applied)
    }

    /// The group's stored profile for a lint: nil when it has none, and when it cannot be read,
    /// with the `profile-unreadable` warning that says so (the lint then falls back to a guess,
    /// and `lint=strict` refuses, so a broken file never silently turns its checks off).
    static func storedProfile(_ store: FeedStore, group: String) -> (profile: WidgetProfile?, warning: LintWarning?) {
        do {
            return (try store.profile(group: group), nil)
        } catch {
            let detail =
                error.detail + " The checks it drives fell back to an inferred profile: PUT a new one or DELETE it."
            return (nil, LintWarning(code: .profileUnreadable, detail: detail))
        }
    }

    /// `report` with `warning` added after the others.
    static func adding(_ warning: LintWarning?, to report: LintReport) -> LintReport {
        guard let warning else { return report }
        var report = report
        report.add(warning.code) { warning }
        return report
    }

    /// `warnings` and, when some were only counted, `warningsOmitted`: the members an answer
    /// carrying a report gets.
    static func members(_ report: LintReport) -> [JSONMember] {
        var members = [JSONMember("warnings", json(report.warnings))]
        if report.omitted > 0 { members.append(JSONMember("warningsOmitted", .number(String(report.omitted)))) }
        if let profile = report.profile { members.append(JSONMember("profile", json(profile))) }
        return members
    }

    /// `{"source":"stored"|"inferred", the profile's members…, "inferred":[…]?}`: the profile a
    /// lint or timeline applied, saying what was guessed.
    static func json(_ applied: LintProfile, source: String? = nil) -> JSONValue {
        var members = [JSONMember("source", .string(source ?? (applied.isInferred ? "inferred" : "stored")))]
        members += applied.profile.strings.map { JSONMember($0.name, .string($0.text)) }
        if applied.isInferred { members.append(JSONMember("inferred", .array(applied.inferred.map { .string($0) }))) }
        return .object(members)
    }

    /// `[{"code","detail","asset"?,"limit"?,"actual"?,"pointer"?}]`.
    static func json(_ warnings: [LintWarning]) -> JSONValue {
        .array(
            warnings.map { warning in
                var members = [
                    JSONMember("code", .string(warning.code.rawValue)), JSONMember("detail", .string(warning.detail)),
                ]
                if let asset = warning.asset { members.append(JSONMember("asset", .string(asset))) }
                if let limit = warning.limit { members.append(JSONMember("limit", .number(String(limit)))) }
                if let actual = warning.actual { members.append(JSONMember("actual", .number(String(actual)))) }
                if let pointer = warning.pointer { members.append(JSONMember("pointer", .string(pointer))) }
                return .object(members)
            })
    }
}
