import HTTPTransport

/// Whether a cache in front of the server (a proxy, a CDN: a shared cache) may keep a read answer
/// for other clients, which decides the answer's `Cache-Control`.
///
/// Without `--read-token` anyone may read anything, so a shared cache may keep a read for all.
/// With it, every read carried the token, and a shared cache may store an answer to a request
/// with `Authorization` when it says `public` (RFC 9111 §3.5), then give it to a client with no
/// token at all. So every read answer of such a server says `private`: only the client's own
/// cache keeps it. A token in the URL (`?access_token=`) travels where no `Authorization` header
/// tells a cache it is credentialed, and RFC 6750 §2.3 asks for `private` on those answers too.
///
/// The caches that prepare one answer for every request (feeds, assets) build their headers
/// with the policy once; `RequestPipeline` gives every other read answer, built per request
/// anyway, its `private` (`makePrivate`).
struct ReadCaching: Sendable {
    /// Whether every read answer says `private`: the server has a read token.
    let isPrivate: Bool

    /// Shared caches may keep reads (no read token).
    static let shared = ReadCaching(isPrivate: false)

    /// An asset's `Cache-Control`: immutable either way, since an asset's URL names one file for
    /// good (the generation id and name), so only who may keep it changes.
    var assets: String { (isPrivate ? "private" : "public") + ", max-age=31536000, immutable" }

    /// A feed read's `Cache-Control`: kept, but revalidated on every use (the feed changes).
    var feeds: String { isPrivate ? "private, no-cache" : "no-cache" }

    /// Whether the answer to `request` on `route` must say `private`: a read of a server with a
    /// read token (its open routes aside: the pages and `/healthz` are the same for anyone and
    /// need no token), or any read that carries the token in its URL.
    func requiresPrivate(_ request: HTTPRequest, route: String) -> Bool {
        guard request.method == "GET" || request.method == "HEAD" else { return false }
        if request.query[Authorization.queryParameter] != nil { return true }
        return isPrivate && !Authorization.openRoutes.contains(route)
    }

    /// Makes an answer `private`: `public` becomes `private`, any other `Cache-Control` gets
    /// `private` in front, and an answer without one gets `Cache-Control: private`. `no-store`
    /// (every problem) and `private` stay as they are. A rewritten answer loses its prepared
    /// `MHD_Response`: that one was built for requests that did not need the rewrite.
    ///
    /// Only this server's own answers come here, spelled as its routes write them (`Cache-Control`,
    /// `private` or `no-store` first), so an answer already right costs a look at its headers and
    /// nothing is allocated.
    static func makePrivate(_ response: inout HTTPResponse) {
        guard let index = response.headers.firstIndex(where: { $0.0 == "Cache-Control" }) else {
            response.headers.append(("Cache-Control", "private"))
            response.prepared = nil
            return
        }
        let value = response.headers[index].1
        guard !value.hasPrefix("private"), !value.hasPrefix("no-store") else { return }
        let others = value.split(separator: ",").map { $0.trimmingSpaces() }.filter { $0 != "public" }
        response.headers[index].1 = (["private"] + others).joined(separator: ", ")
        response.prepared = nil
    }
}
