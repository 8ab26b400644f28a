/// What every request goes through: routing, `OPTIONS`, authorization, the handler, CORS headers,
/// metrics. (Request ids and the access log are the daemon's, so even its own 413s have them.)
struct RequestPipeline: Sendable {
    let router: Router
    let authorization: Authorization
    let cors: CORSPolicy?
    let metrics: Metrics

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
