/// Bytes rendered once and sent by many responses without being copied (cached reads).
package final class SharedBody: Sendable {
    /// The bytes.
    package let bytes: [UInt8]
    /// Called when the last holder lets go (a cache counting the bytes answers still hold).
    private let whenFreed: (@Sendable () -> Void)?

    /// Bytes to share; `whenFreed` runs once nothing holds them any more.
    package init(_ bytes: [UInt8], whenFreed: (@Sendable () -> Void)? = nil) {
        self.bytes = bytes
        self.whenFreed = whenFreed
    }

    deinit { whenFreed?() }
}

/// A response built by a route: status, headers and a body.
package struct HTTPResponse: Sendable {
    /// What is sent as the body.
    package enum Body: Sendable {
        /// Bytes built for this request.
        case bytes([UInt8])
        /// Bytes rendered once and shared by every response that sends them.
        case shared(SharedBody)
        /// No body, but `Content-Length` states this many bytes: the length of the representation
        /// a `304` stands for (RFC 9110 §8.6 allows no other value there).
        case lengthOnly(Int)
        /// A file sent by libmicrohttpd from its descriptor (`MHD_create_response_from_fd`).
        case file(ResponseFile)
        /// A file kept open by a cache and sent by many responses: each `MHD_Response` gets its
        /// own duplicate of the descriptor.
        case sharedFile(ResponseFile)
        /// No answer yet: park the request until the suspension is woken, then ask the handler
        /// again (with `HTTPRequest.resumed` set).
        case suspend(Suspension)
        /// A body written over time (Server-Sent Events).
        case stream(EventStream)
        /// No answer yet: it is being computed elsewhere; park the request until it is there.
        case deferred(DeferredResponse)
    }

    /// The status code.
    package var status: Int
    /// Header fields.
    package var headers: [(String, String)]
    /// The body.
    package var body: Body
    /// Set on answers that are the same for every request (cached reads): the daemon queues one
    /// prepared `MHD_Response` for all of them instead of building one per request.
    package var prepared: PreparedResponse?
    /// What a route tells the application around it about this answer (the write journal's
    /// facts); never sent, and unknown to the transport.
    package var annotation: (any Sendable)? = nil
    /// Which version of the resource this answer carries, for `HTTPResponder.answered`; never sent.
    package var served: ServedVersion? = nil

    /// A response with a byte body.
    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A response with a shared body.
    package init(status: Int, headers: [(String, String)], shared: SharedBody) {
        self.status = status
        self.headers = headers
        body = .shared(shared)
    }

    /// Parks the request until `suspension` is woken.
    package static func suspend(_ suspension: Suspension) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.body = .suspend(suspension)
        return response
    }

    /// Parks the request until `deferred` has its answer.
    package static func deferred(_ deferred: DeferredResponse) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.body = .deferred(deferred)
        return response
    }

    /// A response whose body is an open file.
    package init(file: ResponseFile, headers: [(String, String)]) {
        status = 200
        self.headers = headers
        body = .file(file)
    }

    /// Whether the body is a file libmicrohttpd sends from its descriptor.
    package var sendsFile: Bool {
        switch body {
        case .file, .sharedFile: return true
        default: return false
        }
    }

    /// Body size for the access log and metrics.
    package var bodyByteCount: Int {
        switch body {
        case .bytes(let bytes): return bytes.count
        case .shared(let shared): return shared.bytes.count
        case .file(let file), .sharedFile(let file): return file.size
        case .lengthOnly, .suspend, .stream, .deferred: return 0
        }
    }

    /// A JSON response. `nosniff`: a browser given the URL of a JSON answer (whose strings may
    /// be anyone's payload) must treat it as JSON, never sniff it into HTML or script.
    package static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders + headers, body: body)
    }

    /// The headers of every JSON answer: its type, and no sniffing.
    private static let jsonHeaders = [("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff")]

    /// The value of a header this response carries.
    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
