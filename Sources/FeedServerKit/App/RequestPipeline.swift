/// What every request goes through: routing, `OPTIONS`, authorization, the handler, CORS headers,
/// metrics. (Request ids and the access log are the daemon's, so even its own 413s have them.)
struct RequestPipeline: Sendable {
    let router: Router
    let authorization: Authorization
    let cors: CORSPolicy?
    let metrics: Metrics
    /// Where slow handlers run (nil: inline, for tests of the pipeline alone).
    var pool: WorkPool?

    /// Judges a request that carries a body from its head alone, on the first handler call,
    /// before a body byte is accepted: route (400, 404, 405), token (401), media type (415) and
    /// declared length (413). A refusal comes back with CORS headers and is counted. A body sent
    /// where the route takes none (a `GET`, a `DELETE`, any `OPTIONS`) is dropped as it arrives.
    func admitBody(_ head: HTTPRequest, declaredLength: Int?) -> BodyAdmission {
        var routeIndex = -1
        var refusal: Problem?
        var admission = BodyAdmission.discard
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
                case .success(let most): admission = .accept(limit: most)
                }
            }
        }
        guard let refusal else { return admission }
        var response = refusal.response
        cors?.decorate(&response)
        metrics.recordRequest(route: routeIndex, method: head.method, status: response.status, bytes: response.bodyByteCount)
        response.isCounted = true
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
            } else if let pool, route.offloaded.contains(where: { $0 == (request.method == "HEAD" ? "GET" : request.method) }) {
                return offload(routed, handler, routeIndex: routeIndex, to: pool)
            } else {
                response = handler(routed)
            }
        }
        if case .suspend = response.body { return response }  // counted when it is answered
        return finished(response, routeIndex: routeIndex, method: request.method)
    }

    /// CORS headers and metrics, once the answer is known.
    private func finished(_ response: HTTPResponse, routeIndex: Int, method: String) -> HTTPResponse {
        var response = response
        cors?.decorate(&response)
        metrics.recordRequest(route: routeIndex, method: method, status: response.status, bytes: response.bodyByteCount)
        response.isCounted = true
        return response
    }

    /// Runs a slow handler on the work pool with a copy of the request (its live fields die with
    /// this call); the connection waits suspended. A full queue is a 503 with `Retry-After`.
    private func offload(_ routed: RoutedRequest, _ handler: @escaping @Sendable (RoutedRequest) -> HTTPResponse,
                         routeIndex: Int, to pool: WorkPool) -> HTTPResponse {
        var detached = routed
        detached.request = routed.request.detached()
        let deferred = DeferredResponse()
        let accepted = pool.submit { [self, detached] in
            metrics.workInProgress.add(1, ordering: .relaxed)
            let response = handler(detached)
            metrics.workInProgress.subtract(1, ordering: .relaxed)
            deferred.complete(finished(response, routeIndex: routeIndex, method: detached.request.method))
        }
        guard accepted else {
            let busy = Problem(status: 503, type: "busy", title: "Server busy",
                               detail: "Too many slow requests (publishes, listings) are waiting; try again in a moment.",
                               headers: [("Retry-After", "1")])
            return finished(busy.response, routeIndex: routeIndex, method: routed.request.method)
        }
        return .deferred(deferred)
    }
}

/// What the head of a request with a body decided.
enum BodyAdmission: Sendable {
    /// Read the body; at most `limit` bytes of it when the route says (nil: the daemon's limit).
    case accept(limit: Int?)
    /// Answer with this, without keeping the body.
    case refuse(HTTPResponse)
    /// The route takes no body: read it and drop it (bounded as a drain), then answer as usual.
    case discard
}
