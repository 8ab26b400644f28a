/// `GET /healthz`: the process is up and answering.
struct HealthRoutes: Sendable {
    var route: Route {
        Route(prefix: "healthz", parameterCount: 0, methods: [
            "GET": { _ in .json(200, Array("{\"status\":\"ok\"}\n".utf8), headers: [("Cache-Control", "no-store")]) },
        ])
    }
}
