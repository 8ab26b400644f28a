import HTTPTransport

#if canImport(Glibc)
import Glibc
#endif

/// A request whose path has been split and decoded, handed to a route.
struct RoutedRequest: Sendable {
    /// The original request.
    var request: HTTPRequest
    /// The values of the route's parameter segments, each percent-decoded exactly once.
    var parameters: [String]
}

/// A route's handler: the answer, or the problem it throws (the pipeline renders it).
typealias RouteHandler = @Sendable (RoutedRequest) throws(Problem) -> HTTPResponse

/// A route's answer to a bodyless `GET` or `HEAD` decided from the head alone (a cached read),
/// or nil to route the request as usual, which gives the same answer, only slower.
typealias PreparedOffer = @Sendable (PreparedRequest) -> PreparedAnswer?

/// What a prepared offer sees: the head, read in place, and the route's parameters as sent
/// (plain bytes: a segment with anything to decode is routed as usual).
struct PreparedRequest {
    /// The head as libmicrohttpd parsed it.
    let head: RequestHead
    /// `GET` or `HEAD`.
    let method: String
    /// Byte ranges of the parameter segments in `head.pathBytes`.
    let parameterRanges: PathMatch

    /// A parameter's bytes, in place (valid during the handler call).
    func parameter(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        let range = parameterRanges[index]
        return UnsafeBufferPointer(rebasing: head.pathBytes[range])
    }
}

/// Where a route's slow work runs: the main work pool (publishes without images, deletes,
/// listings); the diagnostics lane, one thread of its own for the journal's reads and
/// verification, so a client asking for the whole journal over and over never makes a publish
/// wait; or the images lane, for publishes that carry images, whose threads wait while lowered
/// threads pack them, so photo publishes never hold every thread a JSON publish, a DELETE or a
/// listing needs.
enum WorkLane: Sendable {
    case main
    case diagnostics
    case images
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
    var methods: [String: RouteHandler]
    /// Its position in the router's table (set by `Router`), for metrics.
    var index = -1
    /// Method → the bodies it takes; a request with a body is judged by this from its head.
    var bodies: [String: BodyPolicy] = [:]
    /// Methods whose handler is slow (disk writes, images, parsing whole feeds): run on the
    /// work pool, never on libmicrohttpd's threads.
    var offloaded: Set<String> = []
    /// For an offloaded method that is slow only sometimes: whether this request's answer is in
    /// memory already (a cached read), so it is answered where it arrived instead of waiting for
    /// a pool thread. Nil: always offloaded.
    var answeredFromMemory: (@Sendable (RoutedRequest) -> Bool)?
    /// Which pool its offloaded methods run on.
    var lane = WorkLane.main
    /// For a route whose requests differ (a publish with images or without): this request's lane.
    var laneOf: (@Sendable (RoutedRequest) -> WorkLane)?
    /// The answer to a plain `GET`/`HEAD` when it is already prepared (cached reads).
    var prepared: PreparedOffer?

    /// Creates a route from a template such as `/feeds/{group}/generations`.
    init(
        _ template: String, methods: [String: RouteHandler], bodies: [String: BodyPolicy] = [:],
        offloaded: Set<String> = [], answeredFromMemory: (@Sendable (RoutedRequest) -> Bool)? = nil,
        prepared: PreparedOffer? = nil, lane: WorkLane = .main, laneOf: (@Sendable (RoutedRequest) -> WorkLane)? = nil
    ) {
        self.lane = lane
        self.laneOf = laneOf
        name = template
        pattern = template.split(separator: "/").map { $0.hasPrefix("{") ? .parameter : .literal(String($0)) }
        self.methods = methods
        self.bodies = bodies
        self.offloaded = offloaded
        self.answeredFromMemory = answeredFromMemory
        self.prepared = prepared
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

    /// Whether this request runs on the work pool.
    func runsOnPool(_ routed: RoutedRequest) -> Bool {
        let method = routed.request.method == "HEAD" ? "GET" : routed.request.method
        guard offloaded.contains(where: { $0 == method }) else { return false }
        return !(answeredFromMemory?(routed) ?? false)
    }

    /// The methods it allows, `HEAD` included wherever `GET` is, for `Allow` headers.
    var allowed: [String] {
        var names = Set(methods.keys)
        if names.contains("GET") { names.insert("HEAD") }
        return names.sorted()
    }

    /// Its `Allow` header: those methods and `OPTIONS`, which the pipeline answers on every route.
    var allowHeader: String { (allowed + ["OPTIONS"]).joined(separator: ", ") }
}

/// A route that offers prepared answers, with its pattern as bytes for matching a path in place.
struct PreparedRoute: Sendable {
    /// The route's position in the table.
    let index: Int
    /// The literal segments' bytes, one after another.
    private let literals: [UInt8]
    /// Per segment: where its literal starts in `literals` and its length, or -1 for a parameter.
    private let segments: [(start: Int, count: Int)]
    /// The route's offer.
    let offer: PreparedOffer
    /// The bytes every matching path starts with (`/feeds/`): most paths are refused by them.
    private let prefix: [UInt8]

    init?(_ route: Route) {
        guard let offer = route.prepared else { return nil }
        index = route.index
        self.offer = offer
        var literals: [UInt8] = []
        var segments: [(start: Int, count: Int)] = []
        for segment in route.pattern {
            switch segment {
            case .literal(let text):
                segments.append((literals.count, text.utf8.count))
                literals += text.utf8
            case .parameter:
                segments.append((0, -1))
            }
        }
        self.literals = literals
        self.segments = segments
        var prefix = Array("/".utf8)
        for segment in route.pattern {
            guard case .literal(let text) = segment else { break }
            prefix += Array(text.utf8) + [UInt8(ascii: "/")]
        }
        self.prefix = prefix
    }

    /// The parameter ranges when the path's bytes match the pattern as they are: no segment to
    /// decode, none empty, no trailing slash (those are routed as usual).
    func match(_ path: UnsafeBufferPointer<UInt8>) -> PathMatch? {
        guard let base = path.baseAddress, path.count > prefix.count,
            prefix.withUnsafeBufferPointer({ memcmp(base, $0.baseAddress!, $0.count) == 0 })
        else { return nil }
        return literals.withUnsafeBufferPointer { literals in
            segments.withUnsafeBufferPointer { segments in
                Self.match(base, count: path.count, literals: literals.baseAddress, segments: segments)
            }
        }
    }

    private static func match(
        _ path: UnsafePointer<UInt8>, count: Int, literals: UnsafePointer<UInt8>?,
        segments: UnsafeBufferPointer<(start: Int, count: Int)>
    ) -> PathMatch? {
        let slash = UInt8(ascii: "/")
        let percent = UInt8(ascii: "%")
        var match = PathMatch()
        var start = 1
        for segment in segments {
            guard start < count else { return nil }
            var end = start
            var plain = true
            while end < count, path[end] != slash {
                if path[end] == percent { plain = false }
                end += 1
            }
            guard end > start else { return nil }
            if segment.count >= 0 {
                guard segment.count == end - start, let literals,
                    memcmp(path + start, literals + segment.start, segment.count) == 0
                else { return nil }
            } else {
                guard plain, match.append(start..<end) else { return nil }
            }
            start = end + 1
        }
        return start == count + 1 ? match : nil
    }
}

/// Up to three parameter ranges of a path matched in place, without an allocation.
struct PathMatch {
    private var ranges: (Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0)
    /// How many parameters matched.
    private(set) var count = 0

    /// Adds a range; false when three are already there (such a route is routed as usual).
    mutating func append(_ range: Range<Int>) -> Bool {
        switch count {
        case 0: ranges.0 = range
        case 1: ranges.1 = range
        case 2: ranges.2 = range
        default: return false
        }
        count += 1
        return true
    }

    /// The range of parameter `index` (an empty range past `count`).
    subscript(index: Int) -> Range<Int> {
        switch index {
        case 0 where count > 0: return ranges.0
        case 1 where count > 1: return ranges.1
        case 2 where count > 2: return ranges.2
        default: return 0..<0
        }
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
    /// What hears of a multipart body's parts as they arrive, made from the routed head (nil:
    /// nothing does).
    var parts: (@Sendable (_ head: RoutedRequest) -> (any MultipartPartObserver)?)? = nil
    /// The route's own checks of the head (its query parameters, its headers), run before any
    /// body byte is accepted: a refusal the route would give after the body comes before it.
    /// They run on libmicrohttpd's thread, so they read the head alone, never the store.
    var head: (@Sendable (_ head: RoutedRequest) throws(Problem) -> Void)? = nil

    /// The most bytes a body of `mediaType` declared to be `bytes` long (nil: chunked) may have,
    /// or the refusal.
    func judge(mediaType: String?, bytes: Int?) throws(Problem) -> Int {
        guard let mediaType, let limit = limits[mediaType] else { throw unsupported(mediaType) }
        if let bytes, bytes > limit { throw tooLarge(bytes, limit) }
        return limit
    }
}

/// Splits the path, decodes each segment once, finds the route and method, or answers 404/405.
struct Router: Sendable {
    let routes: [Route]
    /// The routes that offer prepared answers, in table order.
    private let preparing: [PreparedRoute]

    /// A router over `routes`, numbering them for metrics.
    init(routes: [Route]) {
        let numbered = routes.enumerated().map { index, route in
            var numbered = route
            numbered.index = index
            return numbered
        }
        self.routes = numbered
        preparing = numbered.compactMap(PreparedRoute.init)
    }

    /// What routing decided for a request.
    enum Decision {
        case handler(Route, RoutedRequest, RouteHandler)
        case problem(Route?, Problem)
    }

    /// Finds the handler for a request, or the problem to answer with.
    func route(_ request: HTTPRequest) -> Decision {
        guard let segments = Self.segments(of: request.rawPath) else { return .problem(nil, .invalidPath) }
        for index in routes.indices {
            // Matched in place: a route is copied (its tables retained) only once it matches.
            guard let parameters = routes[index].match(segments) else { continue }
            let route = routes[index]
            let routed = RoutedRequest(request: request, parameters: parameters)
            // A route has a handful of methods: comparing small strings beats hashing one.
            let wanted =
                request.method == "HEAD" && !route.methods.keys.contains { $0 == "HEAD" } ? "GET" : request.method
            if let handler = route.methods.first(where: { $0.key == wanted })?.value {
                return .handler(route, routed, handler)
            }
            return .problem(route, .methodNotAllowed(request.method, route: route))
        }
        return .problem(nil, .notFound("No resource at \(request.rawPath)."))
    }

    /// The prepared answer of the route a plain `GET` or `HEAD` matches, with that route's
    /// position and the method; nil when no route prepares one (the request is then routed as
    /// usual).
    func preparedAnswer(_ head: RequestHead) -> (route: Int, method: String, answer: PreparedAnswer)? {
        guard !head.hasQuery else { return nil }
        let method: String
        if head.isGET { method = "GET" } else if head.isHEAD { method = "HEAD" } else { return nil }
        let path = head.pathBytes
        // By position: iterating would copy each route (retaining its tables) just to look at it.
        for position in preparing.indices {
            guard let match = preparing[position].match(path) else { continue }
            let request = PreparedRequest(head: head, method: method, parameterRanges: match)
            guard let answer = preparing[position].offer(request) else { return nil }
            return (preparing[position].index, method, answer)
        }
        return nil
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
                    guard let segment = PercentDecoding.decode(String(decoding: slice, as: UTF8.self)) else {
                        return nil
                    }
                    segments.append(segment)
                }
                start = end + 1
            }
            return segments
        }
    }
}
