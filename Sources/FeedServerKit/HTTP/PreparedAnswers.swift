import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The head of a bodyless request as libmicrohttpd parsed it, read in place: nothing is copied
/// or allocated to look at it.
struct RequestHead {
    /// The method as sent (`GET`, `HEAD`, ...).
    let method: UnsafePointer<CChar>
    /// The path as sent, still percent-encoded, without the query.
    let path: UnsafePointer<CChar>
    /// The first `If-None-Match` as sent (nil: none), in place: valid during the handler call only.
    let ifNoneMatch: UnsafePointer<CChar>?
    /// Whether the request has a query string with at least one parameter.
    let hasQuery: Bool

    /// The path's bytes, in place.
    var pathBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(path).assumingMemoryBound(to: UInt8.self), count: strlen(path))
    }

    /// Whether the method is exactly `name` (`strcmp` on the bytes as sent).
    func methodIs(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { wanted in
            wanted.baseAddress!.withMemoryRebound(to: CChar.self, capacity: wanted.count + 1) { strcmp(method, $0) == 0 }
        }
    }
}

/// An answer that is the same for every request that gets it, already built as one shared
/// `MHD_Response` (a cached read's `200` or `304`).
struct PreparedAnswer {
    /// The owner of `handle`, held until the handle is queued: a publish may drop the cache entry
    /// that held it meanwhile, and its last release destroys the `MHD_Response`.
    let owner: PreparedResponse
    /// The shared libmicrohttpd response.
    let handle: OpaquePointer
    /// Its status code.
    let status: Int
    /// Body bytes it sends to a `GET`, for metrics and the access log.
    let bodyBytes: Int
    /// Whether it sends a file's bytes (an asset to a `GET`): the daemon corks the socket until
    /// the answer is complete, so the header leaves with the file's first bytes.
    var sendsFile = false
}

/// Answers some bodyless requests from prepared responses straight from the access handler,
/// before the request model, the router and the pipeline are built: the cost of a cached read is
/// then close to what libmicrohttpd itself needs (issue 10). nil: the request goes the usual way,
/// which gives the same answer, only slower; so a shortcut may decline anything it is unsure of.
///
/// It is asked only when no answer header is added per request (no client `X-Request-Id`, not
/// shutting down), and it must apply the same rules as the pipeline (authorization, metrics).
typealias PreparedAnswers = @Sendable (RequestHead) -> PreparedAnswer?
