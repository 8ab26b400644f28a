/// What every request goes through: routing, `OPTIONS`, authorization, the handler, CORS headers,
/// metrics. (Request ids and the access log are the daemon's, so even its own 413s have them.)
struct RequestPipeline: Sendable {
    let router: Router
    let authorization: Authorization
    let cors: CORSPolicy?
    let metrics: Metrics

    /// Judges a request that carries a body from its head alone, on the first handler call,
    /// before a body byte is accepted: route (400, 404, 405), token (401), media type (415) and
    /// declared length (413). A refusal comes back with CORS headers and is counted.
    func admitBody(_ head: HTTPRequest, declaredLength: Int?) -> BodyAdmission {
        var routeIndex = -1
        var refusal: Problem?
        var limit: Int?
        switch router.route(head) {
        case .problem(let route, let problem):
            routeIndex = route?.index ?? -1
            if head.method != "OPTIONS" { refusal = problem }
        case .handler(let route, _, _):
            routeIndex = route.index
            refusal = authorization.denial(for: head, route: route.name)
            if refusal == nil, let policy = route.bodies[head.method] {
                switch policy.judge(mediaType: head.mediaType, bytes: declaredLength) {
                case .failure(let problem): refusal = problem
                case .success(let most): limit = most
                }
            }
        }
        guard let refusal else { return .accept(limit: limit) }
        var response = refusal.response
        cors?.decorate(&response)
        metrics.recordRequest(route: routeIndex, method: head.method, status: response.status, bytes: response.bodyByteCount)
        return .refuse(response)
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        var routeIndex = -1
        var response: HTTPResponse
        switch router.route(request) {
        case .problem(let route, let problem):
            routeIndex = route?.index ?? -1
            if request.method == "OPTIONS", let route {
                response = cors?.preflight(allowed: route.allowed)
                    ?? HTTPResponse(status: 204, headers: [("Allow", (route.allowed + ["OPTIONS"]).joined(separator: ", "))])
            } else {
                response = problem.response
            }
        case .handler(let route, let routed, let handler):
            routeIndex = route.index
            if let denial = authorization.denial(for: request, route: route.name) {
                response = denial.response
            } else {
                response = handler(routed)
            }
        }
        if case .suspend = response.body { return response }  // counted when it is answered
        cors?.decorate(&response)
        metrics.recordRequest(route: routeIndex, method: request.method, status: response.status, bytes: response.bodyByteCount)
        return response
    }
}

/// What the head of a request with a body decided.
enum BodyAdmission: Sendable {
    /// Read the body; at most `limit` bytes of it when the route says (nil: the daemon's limit).
    case accept(limit: Int?)
    /// Answer with this, without keeping the body.
    case refuse(HTTPResponse)
}
