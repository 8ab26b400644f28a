import FeedStore
import HTTPTransport

/// Bearer tokens: `--token` guards writes (PUT, DELETE, POST but `POST /journal/verify`, a read),
/// `--read-token` guards reads when
/// set. A server with any token never accepts an anonymous write: with only `--read-token`, that
/// token is needed for writes too. `/healthz`, the page shells and CORS preflights stay open. Tokens are compared
/// in constant time.
///
/// `EventSource` cannot send headers, so the read routes a page follows (the event stream and the
/// long-poll `GET /feeds/{group}?wait=`) also take the token as an `access_token` query
/// parameter (RFC 6750 §2.3). Only there: anywhere else it is refused, so a token never has to
/// travel in a URL that is cached, bookmarked or shared. The access log prints the path without
/// its query, so the token never reaches it.
struct Authorization: Sendable {
    let writeToken: String?
    let readToken: String?

    /// Routes anyone may call whatever the tokens: the health check, and the two static pages
    /// with their scripts and styles (they hold no data; the pages ask for the read token and
    /// send it with every read).
    static let openRoutes: Set<String> = Set(["/healthz"]).union(PreviewRoutes.templates)
    /// More such routes for this server (the fault route while the lab is off: a plain 404).
    var alsoOpen: Set<String> = []
    /// The query parameter that may carry the token on the routes that follow a feed.
    static let queryParameter = "access_token"

    /// Whether a read needs no token (no `--read-token`): prepared answers are given only then.
    var readsAreOpen: Bool { readToken == nil }

    /// Throws the 401 to answer with unless the request may proceed.
    func check(_ request: HTTPRequest, route: String) throws(Problem) {
        guard writeToken != nil || readToken != nil else { return }  // an open server: nothing to look up
        guard !Self.openRoutes.contains(route), !alsoOpen.contains(route), request.method != "OPTIONS" else { return }
        // Verifying the journal reads it: a CI step checking with the read token needs no more.
        let isWrite = !["GET", "HEAD"].contains(request.method) && route != JournalRoutes.verifyTemplate
        let accepted = isWrite ? acceptedForWrites : acceptedForReads
        guard !accepted.isEmpty else { return }
        let inQuery = request.query[Self.queryParameter]
        if request.headers["Authorization"] == nil, inQuery != nil, !Self.takesTokenInQuery(request, route: route) {
            throw Problem.tokenNotAcceptedInQuery
        }
        let presented = Self.bearer(request.headers["Authorization"]) ?? inQuery
        if let presented, accepted.contains(where: { Self.constantTimeEqual($0, presented) }) { return }
        throw Problem.unauthorized(isWrite: isWrite, presented: presented != nil)
    }

    /// Reads that a browser page holds open while it follows a feed: the event stream and the
    /// long-poll (a plain `GET /feeds/{group}` without `wait` does not qualify).
    static func takesTokenInQuery(_ request: HTTPRequest, route: String) -> Bool {
        guard ["GET", "HEAD"].contains(request.method) else { return false }
        return route == "/feeds/{group}/events" || (route == "/feeds/{group}" && request.query["wait"] != nil)
    }

    /// The write token; failing that, the read token (any configured token closes writes).
    private var acceptedForWrites: [String] { [writeToken ?? readToken].compactMap { $0 } }

    /// Nothing (reads open) without a read token; with one, it or the write token.
    private var acceptedForReads: [String] { readToken == nil ? [] : [readToken, writeToken].compactMap { $0 } }

    private static func bearer(_ header: String?) -> String? {
        guard let header, header.utf8.count > 7, header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingSpaces()
    }

    /// Compares SHA-256 digests byte by byte without an early exit, so neither the position of
    /// the first difference nor the token's length shows in the timing.
    static func constantTimeEqual(_ expected: String, _ presented: String) -> Bool {
        let a = SHA256Hash.digest(Array(expected.utf8))
        let b = SHA256Hash.digest(Array(presented.utf8))
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
