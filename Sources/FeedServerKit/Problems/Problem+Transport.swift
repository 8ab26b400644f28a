import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// The transport's own refusals, and the pipeline's, as problems.
extension Problem {
    /// The problem for a refusal the transport decided.
    init(_ refusal: TransportRefusal) {
        switch refusal {
        case .ambiguousFraming(let conflict): self = .ambiguousMessageLength(conflict)
        case .unsupportedTransferCoding(let coding): self = .unsupportedTransferCoding(coding)
        case .bodyTooLarge(let limit): self = .bodyTooLarge(limit: limit)
        case .bodyNotTaken: self = .bodyNotTaken
        case .inflightLimit(let limit): self = .inflightLimit(limit)
        case .memoryLimit(let limit): self = .memoryLimit(limit)
        case .queryTooLong(let maxArguments): self = .queryTooLong(maxArguments: maxArguments)
        case .shuttingDown(let started): self = .shuttingDown(started: started)
        case .malformedMultipart(let failure): self = .malformedMultipart(failure)
        case .tooManyParts(let limit): self = .tooManyParts(limit)
        case .memoryPartsTooLarge(let limit):
            self = .payloadTooLarge(
                "The payload part is larger than \(limit) bytes (--max-payload-bytes; parts kept in memory count "
                    + "together)."
            )
        case .uploadNotStored(let reason): self = .uploadNotStored(reason: reason)
        }
    }

    /// 400 and close: where the body ends is ambiguous (RFC 9112 §6.3). libmicrohttpd 0.9.75
    /// takes the first `Content-Length` it sees and files a folded field under another name; a
    /// proxy in front may do otherwise, and the bytes after the body would be read as a different
    /// request by each (request smuggling).
    static func ambiguousMessageLength(_ conflict: FramingConflict) -> Problem {
        let what =
            switch conflict {
            case .differentLengths: "Content-Length is given more than once with different values"
            case .lengthAndCoding: "Content-Length and Transfer-Encoding are both given"
            case .folded:
                "A header field is folded onto a second line (obsolete line folding, RFC 9112 §5.2), or its name "
                    + "starts with Content-Length or Transfer-Encoding"
            }
        return Problem(
            status: 400, type: "ambiguous-message-length", title: "Ambiguous message length",
            detail:
                "\(what), so where the body ends is ambiguous (RFC 9112 §6.3). Send one Content-Length, or chunked "
                + "alone.",
            headers: [("Connection", "close")])
    }

    /// 501 and close for a transfer coding other than `chunked` alone.
    static func unsupportedTransferCoding(_ coding: String) -> Problem {
        Problem(
            status: 501, type: "unsupported-transfer-coding", title: "Unsupported transfer coding",
            detail:
                "Transfer-Encoding '\(coding)' is not supported: send the body with a Content-Length, or chunked "
                + "alone.",
            headers: [("Connection", "close")])
    }

    /// 413 for a body over this request's limit.
    static func bodyTooLarge(limit: Int) -> Problem {
        Problem(
            status: 413, type: "body-too-large", title: "Request body too large",
            detail:
                "The request body exceeds this request's limit of \(limit) bytes (a publish's is --max-body-bytes, "
                + "a JSON payload's --max-payload-bytes; a profile or a fault order has a fixed limit)."
        )
    }

    /// 413 for a declared body over a route's limit.
    static func bodyTooLarge(bytes: Int, limit: Int) -> Problem {
        Problem(
            status: 413, type: "body-too-large", title: "Request body too large",
            detail: "The request body has \(bytes) bytes; the limit is \(limit) (--max-body-bytes).")
    }

    /// 413 for a body sent where none is taken, past what is read and dropped.
    static var bodyNotTaken: Problem {
        Problem(
            status: 413, type: "body-too-large", title: "Request body too large",
            detail:
                "This request takes no body; at most \(BodyDrain.maxBytes) bytes of one are read and dropped, "
                + "within \(BodyDrain.maxNanos / 1_000_000_000) s."
        )
    }

    /// 503 `busy` with `Retry-After`: the server has no room for the request now; nothing was done.
    static func busy(_ detail: String, retryAfterSeconds: Int) -> Problem {
        Problem(
            status: 503, type: "busy", title: "Server busy", detail: detail,
            headers: [("Retry-After", String(retryAfterSeconds))])
    }

    /// 503 while other uploads hold the in-flight budget.
    static func inflightLimit(_ limit: Int) -> Problem {
        busy(
            "Other uploads in progress hold the server's limit of \(limit) body bytes in flight "
                + "(--max-inflight-bytes); try again in a moment.", retryAfterSeconds: 2)
    }

    /// 414 and close: more query arguments than the server reads (libmicrohttpd keeps each in the
    /// connection's fixed memory; no route takes more than a dozen).
    static func queryTooLong(maxArguments: Int) -> Problem {
        Problem(
            status: 414, type: "query-too-long", title: "Query too long",
            detail:
                "The query has more arguments than the server reads: at most \(maxArguments), fewer beside a long "
                + "path. No route takes more than a dozen.")
    }

    /// 503 while other requests' bodies hold the memory budget.
    static func memoryLimit(_ limit: Int) -> Problem {
        busy(
            "Other requests in progress hold the server's limit of \(limit) bytes of memory for request bodies "
                + "(--max-memory-body-bytes; each body byte counts \(TransportSettings.memoryCostPerBodyByte) times: the "
                + "byte, its parsed form and the feed written from it, and each [ { , : of a payload "
                + "\(JSONMemoryEstimate.bytesPerValue) bytes more); try again in a moment.", retryAfterSeconds: 2)
    }

    /// 503 while answers still being sent to slow clients hold the bytes of rendered feeds
    /// allowed outside the read cache.
    static func rendersLimit(_ limit: Int) -> Problem {
        busy(
            "Answers still being sent to slow clients hold the server's limit of \(limit) bytes of rendered "
                + "feeds outside the read cache (half of --read-cache-bytes, at least 16 MiB); try again in a moment.",
            retryAfterSeconds: 2)
    }

    /// 503 when the work pool's queue is full.
    static var workQueueFull: Problem {
        busy("Too many slow requests (publishes, listings) are waiting; try again in a moment.", retryAfterSeconds: 1)
    }

    /// 503 during a shutdown: not started, or stopped before it finished.
    static func shuttingDown(started: Bool) -> Problem {
        Problem(
            status: 503, type: "shutting-down", title: "Shutting down",
            detail: started
                ? "The server stopped before this request finished; it may or may not have taken effect. Retry once "
                    + "it is back."
                : "The server is shutting down and did not start this request; nothing was done. Retry once it is "
                    + "back.",
            headers: [("Retry-After", "1")])
    }

    /// 400 for a multipart body that cannot be parsed.
    static func malformedMultipart(_ failure: MultipartFailure) -> Problem {
        let detail =
            switch failure {
            case .noBoundary: "The multipart/form-data Content-Type needs a boundary parameter."
            case .unparsable: "The multipart/form-data body could not be parsed (check the boundary and part headers)."
            case .unterminated: "The multipart/form-data body ended before its closing boundary."
            }
        return .badRequest("malformed-multipart", "Malformed multipart body", detail)
    }

    /// 413 for more parts than `--max-parts`.
    static func tooManyParts(_ limit: Int) -> Problem {
        Problem(
            status: 413, type: "too-many-parts", title: "Too many parts",
            detail: "The multipart body has more than \(limit) parts (--max-parts).")
    }

    /// 507 for an upload the server could not store.
    static func uploadNotStored(reason: String) -> Problem {
        Problem(
            status: 507, type: "insufficient-storage", title: "Upload could not be stored",
            detail: "The upload could not be written to the server's upload folder (\(reason)); nothing was published.")
    }

    /// 503 when a thread the request needs cannot be started (a process or memory limit).
    static func threadUnavailable(_ error: ThreadStartError) -> Problem {
        busy(
            "The server could not start a thread for this request (\(error.description)); try again in a moment.",
            retryAfterSeconds: 1)
    }

    /// 400 for a path that cannot be decoded.
    static var invalidPath: Problem {
        .badRequest("invalid-path", "Invalid path", "The path has a malformed percent-encoding or is not UTF-8.")
    }

    /// 401 for an `access_token` query parameter where only the header is taken.
    static var tokenNotAcceptedInQuery: Problem {
        Problem(
            status: 401, type: "unauthorized", title: "Unauthorized",
            detail:
                "access_token in the URL is accepted only by GET /feeds/{group}/events and the long-poll GET "
                + "/feeds/{group}?wait=...; send an Authorization: Bearer <token> header here.",
            headers: [("WWW-Authenticate", "Bearer realm=\"feed-server\", error=\"invalid_request\"")])
    }

    /// 401 for a missing or wrong token.
    static func unauthorized(isWrite: Bool, presented: Bool) -> Problem {
        let challenge =
            presented ? "Bearer realm=\"feed-server\", error=\"invalid_token\"" : "Bearer realm=\"feed-server\""
        return Problem(
            status: 401, type: "unauthorized", title: "Unauthorized",
            detail: presented
                ? "The bearer token is not valid for this \(isWrite ? "write" : "read")."
                : "This \(isWrite ? "write" : "read") needs an Authorization: Bearer <token> header.",
            headers: [("WWW-Authenticate", challenge)])
    }
}
