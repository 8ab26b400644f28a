import HTTPTransport

/// `GET /` (the list of feeds) and `GET /preview/{group}` (the live widget preview): static,
/// self-contained pages compiled into the binary; they read the API like any client.
struct PreviewRoutes: Sendable {
    var routes: [Route] {
        [
            Route("/", methods: ["GET": { _ in page(PackageResources.index_html) }]),
            Route("/preview/{group}", methods: ["GET": { _ in page(PackageResources.preview_html) }]),
        ]
    }

    private func page(_ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Cache-Control", "no-cache"),
                // Nothing is fetched from anywhere but this server (blob: holds images fetched with the
                // read token, which an <img> cannot send).
                (
                    "Content-Security-Policy",
                    "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; "
                        + "img-src 'self' data: blob:"
                ),
                ("X-Content-Type-Options", "nosniff"),
            ], body: bytes)
    }
}
