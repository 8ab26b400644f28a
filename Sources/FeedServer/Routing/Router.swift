/// A request whose path has been split and decoded, handed to a route.
struct RoutedRequest: Sendable {
    /// The original request.
    var request: HTTPRequest
    /// Path segments after the route's prefix, each percent-decoded exactly once.
    var parameters: [String]
}

/// One route family: a fixed first path segment and the methods it answers.
struct Route: Sendable {
    /// The first path segment (`feeds`, `healthz`, ...).
    var prefix: String
    /// Number of segments after the prefix this route accepts.
    var parameterCount: Int
    /// Method → handler. `HEAD` is answered by the `GET` handler when not listed.
    var methods: [String: @Sendable (RoutedRequest) -> HTTPResponse]
}

/// Splits the path, decodes each segment once, finds the route and method, or answers 404/405.
struct Router: Sendable {
    let routes: [Route]

    /// Routes one request.
    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let segments = Self.segments(of: request.rawPath) else {
            return Problem.badRequest("invalid-path", "Invalid path", "The path has a malformed percent-encoding or is not UTF-8.").response
        }
        guard let first = segments.first,
              let route = routes.first(where: { $0.prefix == first && $0.parameterCount == segments.count - 1 }) else {
            return Problem.notFound("No resource at \(request.rawPath).").response
        }
        let routed = RoutedRequest(request: request, parameters: Array(segments.dropFirst()))
        if let handler = route.methods[request.method] { return handler(routed) }
        if request.method == "HEAD", let get = route.methods["GET"] { return get(routed) }
        var allowed = route.methods.keys.sorted()
        if route.methods["GET"] != nil, route.methods["HEAD"] == nil { allowed.append("HEAD") }
        return Problem.methodNotAllowed(request.method, allowed: allowed.sorted()).response
    }

    /// Path segments, each decoded once; nil when an escape is malformed. `/a//b/` → `["a", "", "b"]`
    /// (an empty trailing segment is dropped so `/feeds/x/` matches `/feeds/x`).
    static func segments(of path: String) -> [String]? {
        var parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        if parts.count > 1, parts.last?.isEmpty == true { parts = parts.dropLast() }
        var decoded: [String] = []
        decoded.reserveCapacity(parts.count)
        for part in parts {
            guard let segment = PercentDecoding.decode(Substring(part)) else { return nil }
            decoded.append(segment)
        }
        return decoded
    }
}
