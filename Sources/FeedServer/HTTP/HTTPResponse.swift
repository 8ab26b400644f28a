import FeedStore

/// A response built by a route: status, headers and a body that is either bytes or prepared once.
struct HTTPResponse: Sendable {
    /// What is sent as the body.
    enum Body: Sendable {
        /// Bytes built for this request.
        case bytes([UInt8])
        /// A libmicrohttpd response built once and queued many times (cached reads).
        case prepared(PreparedResponse)
        /// A file sent by libmicrohttpd from its descriptor (`MHD_create_response_from_fd`).
        case file(OpenedFile)
    }

    /// The status code.
    var status: Int
    /// Header fields (not used for `.prepared`, which carries its own).
    var headers: [(String, String)]
    /// The body.
    var body: Body

    /// A response with a byte body.
    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A response whose body is an open file.
    init(file: OpenedFile, headers: [(String, String)]) {
        status = 200
        self.headers = headers
        body = .file(file)
    }

    /// A response reusing a prepared libmicrohttpd response.
    init(prepared: PreparedResponse) {
        status = prepared.status
        headers = []
        body = .prepared(prepared)
    }

    /// Body size for the access log.
    var bodyByteCount: Int {
        switch body {
        case .bytes(let bytes): return bytes.count
        case .prepared(let prepared): return prepared.byteCount
        case .file(let file): return file.size
        }
    }

    /// A JSON response.
    static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }
}
