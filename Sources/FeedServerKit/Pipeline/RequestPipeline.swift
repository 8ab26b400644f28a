import ConcurrencyPrimitives
import HTTPTransport

/// What every request goes through, whichever way it is answered: routing, `OPTIONS`,
/// authorization, the handler (problems it throws caught here, once), `private` on reads that
/// need or carry a token (`ReadCaching`), CORS headers, the request metrics, counted here and
/// nowhere else, the write journal, recorded here for every write that reached its route, and
/// the request history (`RecentRequests`), fed with every answer the transport queued. (Request
/// ids and the access log are the transport's, so even its own refusals have them.)
///
/// A class: the transport holds it as `any HTTPResponder` and calls it on every request, and a
/// struct of this size would be copied (each of its tables retained and released) on each call.
final class RequestPipeline: HTTPResponder {
    let router: Router
    let authorization: Authorization
    let cors: CORSPolicy?
    /// Whether read answers say `private`.
    let caching: ReadCaching
    let metrics: Metrics
    /// Where slow handlers run (nil: inline, for tests of the pipeline alone).
    let pool: WorkPool?
    /// Where the diagnostics lane's slow handlers run (nil: on `pool`).
    let diagnosticsPool: WorkPool?
    /// Where the images lane's slow handlers run (nil: on `pool`).
    let imagesPool: WorkPool?
    /// Where writes are recorded (nil: `--journal off`).
    let journal: WriteJournal?
    /// The last answered requests, for `GET /journal/reads` (nil: none kept).
    let recent: RecentRequests?

    init(
        router: Router, authorization: Authorization, cors: CORSPolicy?, caching: ReadCaching, metrics: Metrics,
        pool: WorkPool?, diagnosticsPool: WorkPool? = nil, imagesPool: WorkPool? = nil, journal: WriteJournal? = nil,
        recent: RecentRequests? = nil
    ) {
        self.diagnosticsPool = diagnosticsPool
        self.imagesPool = imagesPool
        self.router = router
        self.authorization = authorization
        self.cors = cors
        self.caching = caching
        self.metrics = metrics
        self.pool = pool
        self.journal = journal
        self.recent = recent
    }

    /// Judges a request that carries a body from its head alone, on the first handler call,
    /// before a body byte is accepted: route (400, 404, 405), token (401), media type (415),
    /// declared length (413) and the route's own head checks (a publish's parameters: 400). A
    /// body sent where the route takes none (a `GET`, a `DELETE`, any `OPTIONS`) is dropped as it
    /// arrives.
    func admitBody(_ head: HTTPRequest, declaredLength: Int?) -> BodyAdmission {
        var routeIndex = -1
        do throws(Problem) {
            switch router.route(head) {
            case .problem(let route, let problem):
                routeIndex = route?.index ?? -1
                if head.method != "OPTIONS" { throw problem }
                return .discard
            case .handler(let route, let routed, _):
                routeIndex = route.index
                try authorization.check(head, route: route.name)
                guard let policy = route.bodies[head.method] else { return .discard }
                let limit = try policy.judge(mediaType: head.mediaType, bytes: declaredLength)
                try policy.head?(routed)
                let observer = head.mediaType == "multipart/form-data" ? policy.parts?(routed) : nil
                return .accept(limit: limit, parts: observer)
            }
        } catch {
            return .refuse(finished(error.response, routeIndex: routeIndex, request: head))
        }
    }

    /// A cached read answered from the route's prepared answer, counted like any other. Reads
    /// that need a token are always routed: the token is checked in one place. So is a request
    /// whose answer names its `Origin` (several `--cors-origin`s): the prepared answer is one for
    /// all, and names none.
    func preparedAnswer(_ head: RequestHead) -> PreparedAnswer? {
        guard authorization.readsAreOpen else { return nil }
        if let origin = head.origin, let cors, cors.namesOrigin(origin) { return nil }
        guard let (route, method, answer) = router.preparedAnswer(head) else { return nil }
        count(routeIndex: route, method: method, status: answer.status, bytes: answer.bodyBytes)
        metrics.recordPreparedAnswer()
        return answer
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        var routeIndex = -1
        let response: HTTPResponse
        do throws(Problem) {
            switch router.route(request) {
            case .problem(let route, let problem):
                routeIndex = route?.index ?? -1
                guard request.method == "OPTIONS", let route else { throw problem }
                response = preflight(route)
            case .handler(let route, let routed, let handler):
                routeIndex = route.index
                try authorization.check(request, route: route.name)
                // A value that does not decode would read as absent: a filter would match everything.
                if let name = request.query.undecodableName {
                    throw Problem.invalidParameter(
                        "The query parameter '\(Problem.shown(name))' (its name or its value) is not percent-encoded UTF-8."
                    )
                }
                if let pool, route.runsOnPool(routed) {
                    let lanePool = self.pool(for: route.laneOf?(routed) ?? route.lane, main: pool)
                    return offload(routed, handler, route: route.name, routeIndex: routeIndex, to: lanePool)
                }
                response = privateWhenRequired(try handler(routed), request, route: route.name)
            }
        } catch {
            return finished(error.response, routeIndex: routeIndex, request: request)
        }
        if case .suspend = response.body { return response }  // counted when it is answered
        return finished(response, routeIndex: routeIndex, request: request)
    }

    /// The transport's own refusals (framing, limits, shutdown, failed uploads): no route
    /// decided them.
    func respond(to refusal: TransportRefusal, method: String, origin: String?) -> HTTPResponse {
        var response = Problem(refusal).response
        cors?.decorate(&response, origin: origin)
        count(routeIndex: -1, method: method, status: response.status, bytes: response.bodyByteCount)
        return response
    }

    /// Counted as `499` (nginx's "client closed request") under `route="unmatched"`: no answer
    /// was sent, and which route would have answered is not kept for a request that went away.
    func requestAbandoned(method: String) {
        count(routeIndex: -1, method: method, status: 499, bytes: 0)
    }

    /// Every queued answer, as the transport saw it, goes into the request history.
    func answered(_ request: AnsweredRequest) {
        recent?.record(request)
    }

    private func preflight(_ route: Route) -> HTTPResponse {
        cors?.preflight(route) ?? HTTPResponse(status: 204, headers: [("Allow", route.allowHeader)])
    }

    /// The answer, `private` when the request needs or carries a token; the caches' answers are
    /// built that way already, so on them this is a look at one header.
    private func privateWhenRequired(_ response: HTTPResponse, _ request: HTTPRequest, route: String) -> HTTPResponse {
        guard caching.requiresPrivate(request, route: route) else { return response }
        if case .suspend = response.body { return response }  // asked again when woken, and decided then
        var response = response
        ReadCaching.makePrivate(&response)
        return response
    }

    /// CORS headers and metrics, once the answer to `request` is known.
    private func finished(_ response: HTTPResponse, routeIndex: Int, request: HTTPRequest) -> HTTPResponse {
        var response = response
        cors?.decorate(&response, request: request)
        count(routeIndex: routeIndex, method: request.method, status: response.status, bytes: response.bodyByteCount)
        return response
    }

    /// The one place requests are counted.
    private func count(routeIndex: Int, method: String, status: Int, bytes: Int) {
        metrics.recordRequest(route: routeIndex, method: method, status: status, bytes: bytes)
    }

    /// The pool a lane's slow handlers run on (the main one when the lane has none).
    private func pool(for lane: WorkLane, main: WorkPool) -> WorkPool {
        switch lane {
        case .main: main
        case .diagnostics: diagnosticsPool ?? main
        case .images: imagesPool ?? main
        }
    }

    /// Runs a slow handler on the work pool with a copy of the request (its live fields die with
    /// this call); the connection waits suspended. A full queue is a 503 with `Retry-After`.
    private func offload(
        _ routed: RoutedRequest, _ handler: @escaping RouteHandler, route: String, routeIndex: Int, to pool: WorkPool
    )
        -> HTTPResponse
    {
        var detached = routed
        detached.request = routed.request.detached()
        let deferred = DeferredResponse()
        let accepted = pool.submit { [self, detached] in
            // What the handler defers (waking a publish's long-polls) runs once its answer is handed over.
            AfterAnswer.collecting { answer(detached, handler, route: route, routeIndex: routeIndex, into: deferred) }
        }
        guard accepted else {
            return finished(Problem.workQueueFull.response, routeIndex: routeIndex, request: routed.request)
        }
        return .deferred(deferred)
    }

    /// Runs an offloaded handler on the pool and completes `deferred` with its answer.
    private func answer(
        _ detached: RoutedRequest, _ handler: RouteHandler, route: String, routeIndex: Int,
        into deferred: DeferredResponse
    ) {
        metrics.workInProgress.add(1, ordering: .relaxed)
        let response: HTTPResponse
        var problem: Problem?
        do throws(Problem) {
            response = privateWhenRequired(try handler(detached), detached.request, route: route)
        } catch {
            problem = error
            response = error.response
        }
        metrics.workInProgress.subtract(1, ordering: .relaxed)
        // Writes reach the journal here, on the pool, once their answer is known and before it
        // is sent: a client that saw the answer finds the entry, whoever reads the journal and
        // whatever happens to this process next.
        journal?.record(route: route, routed: detached, response: response, problem: problem)
        // A wait decided on the pool (a long-poll read off the disk) is counted when answered.
        if case .suspend = response.body { return deferred.complete(response) }
        deferred.complete(finished(response, routeIndex: routeIndex, request: detached.request))
    }
}
