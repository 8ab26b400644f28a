import FeedStore
import HTTPTransport

/// `/feeds/{group}/profile`: the group's widget profile, which the lint, the timeline and the
/// preview read to resolve each item as the widget's own code would (docs/recipes.md,
/// "Describe your widget").
struct ProfileRoutes: Sendable {
    let store: FeedStore
    /// Reads the group's served payload, which a profile sent must fit.
    let cache: FeedResponseCache

    /// The route template.
    static let template = "/feeds/{group}/profile"

    var routes: [Route] {
        [
            Route(
                Self.template,
                methods: [
                    "GET": { routed throws(Problem) in try read(routed) },
                    "PUT": { routed throws(Problem) in try write(routed) },
                    "DELETE": { routed throws(Problem) in try remove(routed) },
                ], bodies: ["PUT": Self.body.policy], offloaded: ["GET", "PUT", "DELETE"])
        ]
    }

    /// A profile is a small JSON object.
    static let body = SmallJSONBody(
        name: "a profile", example: #"{"items":"/quotes","title":"/text"}"#, limit: WidgetProfile.maxBytes)

    /// The stored profile, with a strong ETag of its bytes (`If-None-Match` → 304).
    func read(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = try validGroup(routed)
        guard let profile = try stored(group) else { throw Problem.noProfile(group) }
        return Self.answer(200, profile, request: routed.request)
    }

    /// Stores the profile sent: 201 when the group had none, 200 when it replaced one.
    func write(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = try validGroup(routed)
        try Self.body.requireJSON(routed.request)
        let profile: WidgetProfile
        do { profile = try WidgetProfile(json: routed.request.body) } catch { throw Problem.invalidProfile(error) }
        try requireFit(profile, group: group)
        let created: Bool
        do { created = try store.storeProfile(profile, group: group) } catch { throw Problem(error) }
        var answer = Self.answer(created ? 201 : 200, profile, request: nil)
        if created { answer.headers.append(("Location", "/feeds/\(group)/profile")) }
        answer.annotation = JournalFacts(result: "stored", payload: .sent(profile.fileBytes))
        return answer
    }

    /// Removes the profile (the feed stays): 204, or 404 when there was none.
    func remove(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = try validGroup(routed)
        let removed: Bool
        do { removed = try store.removeProfile(group: group) } catch { throw Problem(error) }
        guard removed else { throw Problem.noProfile(group) }
        var answer = HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
        answer.annotation = JournalFacts(result: "removed")
        return answer
    }

    /// A profile for a group with a feed must find what it names in the served payload: a
    /// pointer or template field that matches nothing is a 422 naming it. Before the first
    /// publish there is nothing to judge by; the publish's warnings say what misses then.
    private func requireFit(_ profile: WidgetProfile, group: String) throws(Problem) {
        let generation: FeedResponseCache.Entry
        switch cache.lookup(.init(group: group, schemaVersion: nil)) {
        case .feed(let entry): generation = entry
        case .noFeed: return
        case .busy(let refused): throw Problem.rendersLimit(refused.limit)  // not judged, so not stored
        }
        guard
            let payload = try? cache.payload(of: generation),
            let misfit = WidgetItems(profile: profile, payload: payload.root).memberFindingNothing()
        else { return }
        throw Problem.invalidProfile(
            ProfileError(
                misfit.member,
                "\(misfit.detail) Judged against the served generation, \(generation.generationId); when the "
                    + "payload's shape changes too, publish it first, then the profile."))
    }

    private func validGroup(_ routed: RoutedRequest) throws(Problem) -> String {
        let group = routed.parameters[0]
        if let reason = SafeName.groupProblem(with: group) {
            throw Problem(PublishError.invalidGroupName(group, reason: reason))
        }
        return group
    }

    /// The group's profile, a stored one that cannot be read as a 500 that says why.
    private func stored(_ group: String) throws(Problem) -> WidgetProfile? {
        do { return try store.profile(group: group) } catch { throw Problem.unreadableProfile(error) }
    }

    /// The profile as JSON with its ETag; a 304 when `request` already has it.
    private static func answer(_ status: Int, _ profile: WidgetProfile, request: HTTPRequest?) -> HTTPResponse {
        let bytes = profile.fileBytes
        let tag = "\"p-" + String(SHA256Hash.hex(bytes).prefix(32)) + "\""
        let headers = [("ETag", tag), ("Cache-Control", "no-cache")]
        if let request, Conditional.ifNoneMatch(in: request.headers, matches: tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return .json(status, bytes, headers: headers)
    }
}
