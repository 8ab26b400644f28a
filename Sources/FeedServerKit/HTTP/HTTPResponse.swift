import FeedStore

/// Bytes rendered once and sent by many responses without being copied (cached reads).
final class SharedBody: Sendable {
    /// The bytes.
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// A response built by a route: status, headers and a body.
struct HTTPResponse: Sendable {
    /// What is sent as the body.
    enum Body: Sendable {
        /// Bytes built for this request.
        case bytes([UInt8])
        /// Bytes rendered once and shared by every response that sends them.
        case shared(SharedBody)
        /// No body, but `Content-Length` states this many bytes: the length of the representation
        /// a `304` stands for (RFC 9110 §8.6 allows no other value there).
        case lengthOnly(Int)
        /// A file sent by libmicrohttpd from its descriptor (`MHD_create_response_from_fd`).
        case file(OpenedFile)
        /// A file kept open by a cache and sent by many responses: each `MHD_Response` gets its
        /// own duplicate of the descriptor.
        case sharedFile(OpenedFile)
        /// No answer yet: park the request until the suspension is woken, then ask the handler
        /// again (with `HTTPRequest.resumed` set).
        case suspend(Suspension)
        /// A body written over time (Server-Sent Events).
        case stream(EventStream)
        /// No answer yet: it is being computed elsewhere; park the request until it is there.
        case deferred(DeferredResponse)
    }

    /// The status code.
    var status: Int
    /// Header fields.
    var headers: [(String, String)]
    /// The body.
    var body: Body
    /// Set on answers that are the same for every request (cached reads): the daemon queues one
    /// prepared `MHD_Response` for all of them instead of building one per request.
    var prepared: PreparedResponse?
    /// Set once the answer is counted in the request metrics (the pipeline counts what it
    /// answers); the daemon counts any other answer it sends (framing refusals, shutdown, failed uploads).
    var isCounted = false

    /// A response with a byte body.
    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A response with a shared body.
    init(status: Int, headers: [(String, String)], shared: SharedBody) {
        self.status = status
        self.headers = headers
        body = .shared(shared)
    }

    /// Parks the request until `suspension` is woken.
    static func suspend(_ suspension: Suspension) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.body = .suspend(suspension)
        return response
    }

    /// Parks the request until `deferred` has its answer.
    static func deferred(_ deferred: DeferredResponse) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.body = .deferred(deferred)
        return response
    }

    /// A response whose body is an open file.
    init(file: OpenedFile, headers: [(String, String)]) {
        status = 200
        self.headers = headers
        body = .file(file)
    }

    /// Whether the body is a file libmicrohttpd sends from its descriptor.
    var sendsFile: Bool {
        switch body {
        case .file, .sharedFile: return true
        default: return false
        }
    }

    /// Body size for the access log and metrics.
    var bodyByteCount: Int {
        switch body {
        case .bytes(let bytes): return bytes.count
        case .shared(let shared): return shared.bytes.count
        case .file(let file), .sharedFile(let file): return file.size
        case .lengthOnly, .suspend, .stream, .deferred: return 0
        }
    }

    /// A JSON response.
    static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// The value of a header this response carries.
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
