import FeedStore
import HTTPTransport

/// `GET /` (the list of feeds) and `GET /preview/{group}` (the live widget preview): static pages
/// compiled into the binary that read the API like any client, and their scripts and styles
/// (`/index.js`, `/index.css`, `/preview.js`, `/preview.css`), served as files of their own so
/// that the pages' policy runs nothing inline.
struct PreviewRoutes: Sendable {
    /// The routes' templates: open whatever the tokens (`Authorization.openRoutes`), since they
    /// hold no data and are the same for everyone.
    static let templates = Set(["/", "/preview/{group}"] + files.map { $0.path })

    /// The scripts and styles, by path.
    private static let files: [(path: String, contentType: String, bytes: [UInt8])] = [
        ("/index.js", javaScript, PackageResources.index_js), ("/index.css", css, PackageResources.index_css),
        ("/preview.js", javaScript, PackageResources.preview_js), ("/preview.css", css, PackageResources.preview_css),
    ]
    private static let javaScript = "text/javascript; charset=utf-8"
    private static let css = "text/css; charset=utf-8"

    /// What a page may load and who may frame it. Everything comes from this server: `'self'`
    /// for scripts and styles, with no `'unsafe-inline'`, so markup that got into a page (a
    /// group name, a payload string) can neither run script nor restyle it; images also from
    /// `blob:` (assets fetched with the read token, which an `<img>` cannot send) and `data:`
    /// (the empty icon). `frame-ancestors 'none'`: no other site may put a page in a frame and
    /// trick a click on it. No `<base>`, no plug-ins, and no form is ever submitted (the token
    /// forms are read by script).
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    private let index = Self.answers(PackageResources.index_html, Self.page)
    private let preview = Self.answers(PackageResources.preview_html, Self.page)
    private let assets: [(path: String, answers: Answers)] = files.map { file in
        (file.path, Self.answers(file.bytes, [("Content-Type", file.contentType)]))
    }

    var routes: [Route] {
        [
            Route("/", methods: ["GET": { [index] routed in index.answer(to: routed.request) }]),
            Route("/preview/{group}", methods: ["GET": { [preview] routed in preview.answer(to: routed.request) }]),
        ]
            + assets.map { asset in
                Route(asset.path, methods: ["GET": { [answers = asset.answers] in answers.answer(to: $0.request) }])
            }
    }

    /// A page's own headers: its type and its policy.
    private static let page = [
        ("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", contentSecurityPolicy),
    ]

    /// The `200` and `304` of one file, built once. `no-cache` with an `ETag`: a browser keeps
    /// the file but asks each time, so a server upgraded in place is seen on the next load at
    /// the cost of a `304`.
    private struct Answers: Sendable {
        let entityTag: String
        let ok: HTTPResponse
        let notModified: HTTPResponse

        func answer(to request: HTTPRequest) -> HTTPResponse {
            Conditional.ifNoneMatch(in: request.headers, matches: entityTag) ? notModified : ok
        }
    }

    private static func answers(_ bytes: [UInt8], _ own: [(String, String)]) -> Answers {
        let tag = Conditional.entityTag(SHA256Hash.hex(bytes))
        // nosniff: a script or style is used only when its type says so, and a page is never
        // taken for anything else.
        let headers = [("ETag", tag), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff")]
        var notModified = HTTPResponse(status: 304, headers: headers)
        notModified.body = .lengthOnly(bytes.count)
        return Answers(
            entityTag: tag, ok: HTTPResponse(status: 200, headers: own + headers, body: bytes), notModified: notModified
        )
    }
}
