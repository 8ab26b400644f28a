import HTTPTransport

/// `GET /healthz` (liveness, always open) and `GET /metrics` (Prometheus text format).
struct OperationsRoutes: Sendable {
    let metrics: Metrics

    var routes: [Route] {
        [
            Route(
                "/healthz",
                methods: [
                    "GET": { _ in
                        .json(200, Array("{\"status\":\"ok\"}\n".utf8), headers: [("Cache-Control", "no-store")])
                    }
                ]),
            Route(
                "/metrics",
                methods: [
                    "GET": { _ in
                        HTTPResponse(
                            status: 200,
                            headers: [
                                ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                                ("Cache-Control", "no-store"),
                            ],
                            body: Array(metrics.render().utf8))
                    }
                ]),
        ]
    }
}
