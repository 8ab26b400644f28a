/// A request whose path has been split and decoded, handed to a route.
struct RoutedRequest: Sendable {
    /// The original request.
    var request: HTTPRequest
    /// The values of the route's parameter segments, each percent-decoded exactly once.
    var parameters: [String]
}

/// One resource: a path pattern and the methods it answers.
struct Route: Sendable {
    /// A path segment of a pattern.
    enum Segment: Sendable, Equatable {
        /// Must equal this text.
        case literal(String)
        /// Any one segment, passed to the handler.
        case parameter
    }

    /// The pattern, for example `[.literal("feeds"), .parameter, .literal("generations")]`.
    var pattern: [Segment]
    /// A name for metrics and logs, for example `/feeds/{group}/generations`.
    var name: String
    /// Method → handler. `HEAD` is answered by the `GET` handler when not listed.
    var methods: [String: @Sendable (RoutedRequest) -> HTTPResponse]
    /// Its position in the router's table (set by `Router`), for metrics.
    var index = -1
    /// Method → the bodies it takes; a request with a body is judged by this from its head.
    var bodies: [String: BodyPolicy] = [:]
    /// Methods whose handler is slow (disk writes, images, parsing whole feeds): run on the
    /// work pool, never on libmicrohttpd's threads.
    var offloaded: Set<String> = []

    /// Creates a route from a template such as `/feeds/{group}/generations`.
    init(_ template: String, methods: [String: @Sendable (RoutedRequest) -> HTTPResponse], bodies: [String: BodyPolicy] = [:],
         offloaded: Set<String> = []) {
        name = template
        pattern = template.split(separator: "/").map { $0.hasPrefix("{") ? .parameter : .literal(String($0)) }
        self.methods = methods
        self.bodies = bodies
        self.offloaded = offloaded
    }

    /// The parameter values when `segments` match the pattern.
    func match(_ segments: [String]) -> [String]? {
        guard segments.count == pattern.count else { return nil }
        var parameters: [String] = []
        for (segment, expected) in zip(segments, pattern) {
            switch expected {
            case .literal(let text): guard segment == text else { return nil }
            case .parameter: parameters.append(segment)
            }
        }
        return parameters
    }

    /// The methods it allows, `HEAD` included wherever `GET` is, for `Allow` headers.
    var allowed: [String] {
        var names = Set(methods.keys)
        if names.contains("GET") { names.insert("HEAD") }
        return names.sorted()
    }
}

/// The request bodies a method of a route takes: media type → largest body, in bytes.
struct BodyPolicy: Sendable {
    /// Accepted media types (lowercased, no parameters) and the largest body of each.
    var limits: [String: Int]
    /// The 415 for any other media type.
    var unsupported: @Sendable (_ sent: String?) -> Problem
    /// The 413 for a body over its limit.
    var tooLarge: @Sendable (_ bytes: Int, _ limit: Int) -> Problem

    /// The refusal for a body of `mediaType` declared to be `bytes` long (nil: chunked), or the
    /// most bytes it may still have.
    func judge(mediaType: String?, bytes: Int?) -> Result<Int, Problem> {
        guard let mediaType, let limit = limits[mediaType] else { return .failure(unsupported(mediaType)) }
        if let bytes, bytes > limit { return .failure(tooLarge(bytes, limit)) }
        return .success(limit)
    }
}

/// Splits the path, decodes each segment once, finds the route and method, or answers 404/405.
struct Router: Sendable {
    let routes: [Route]

    /// A router over `routes`, numbering them for metrics.
    init(routes: [Route]) {
        self.routes = routes.enumerated().map { index, route in
            var numbered = route
            numbered.index = index
            return numbered
        }
    }

    /// What routing decided for a request.
    enum Decision {
        case handler(Route, RoutedRequest, @Sendable (RoutedRequest) -> HTTPResponse)
        case problem(Route?, Problem)
    }

    /// Finds the handler for a request, or the problem to answer with.
    func route(_ request: HTTPRequest) -> Decision {
        guard let segments = Self.segments(of: request.rawPath) else {
            return .problem(nil, .badRequest("invalid-path", "Invalid path", "The path has a malformed percent-encoding or is not UTF-8."))
        }
        for index in routes.indices {
            // Matched in place: a route is copied (its tables retained) only once it matches.
            guard let parameters = routes[index].match(segments) else { continue }
            let route = routes[index]
            let routed = RoutedRequest(request: request, parameters: parameters)
            // A route has a handful of methods: comparing small strings beats hashing one.
            let wanted = request.method == "HEAD" && !route.methods.keys.contains { $0 == "HEAD" } ? "GET" : request.method
            if let handler = route.methods.first(where: { $0.key == wanted })?.value { return .handler(route, routed, handler) }
            return .problem(route, .methodNotAllowed(request.method, allowed: route.allowed))
        }
        return .problem(nil, .notFound("No resource at \(request.rawPath)."))
    }

    /// Path segments, each decoded once; nil when an escape is malformed. `/a//b/` → `["a", "", "b"]`,
    /// `/` → `[]` (an empty trailing segment is dropped so `/feeds/x/` matches `/feeds/x`).
    static func segments(of path: String) -> [String]? {
        var path = path
        return path.withUTF8 { bytes -> [String]? in
            var segments: [String] = []
            segments.reserveCapacity(6)  // every route has at most 4 segments: no regrowth
            var start = bytes.first == UInt8(ascii: "/") ? 1 : 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
                // An empty last segment (a trailing slash, or the path "/") is dropped.
                if end == bytes.count, end == start { break }
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if !slice.contains(UInt8(ascii: "%")) {
                    segments.append(String(decoding: slice, as: UTF8.self))  // nothing to decode (the usual case)
                } else {
                    guard let segment = PercentDecoding.decode(String(decoding: slice, as: UTF8.self)) else { return nil }
                    segments.append(segment)
                }
                start = end + 1
            }
            return segments
        }
    }
}
