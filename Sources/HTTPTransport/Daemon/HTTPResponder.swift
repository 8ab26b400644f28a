#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the transport asks of the application: it answers requests and renders the transport's
/// own refusals, and it counts every answer it gives (the transport counts nothing). A class:
/// the transport calls it several times on every request, and a class existential is called
/// without copying a box.
package protocol HTTPResponder: AnyObject, Sendable {
    /// Judges a request that carries a body from its head alone, before a body byte is read.
    /// `declaredLength` is nil for a chunked body.
    func admitBody(_ head: HTTPRequest, declaredLength: Int?) -> BodyAdmission

    /// The answer for a bodyless request that is the same for every client (a cached read),
    /// decided from the head; nil lets `respond(to:)` answer. Asked only when no header is added
    /// per request (no client `X-Request-Id`, not shutting down).
    func preparedAnswer(_ head: RequestHead) -> PreparedAnswer?

    /// The answer to a whole request (or `.suspend` / `.deferred` to answer later).
    func respond(to request: HTTPRequest) -> HTTPResponse

    /// The answer for a request the transport refuses itself; `origin` is its `Origin` field when
    /// its head is still at hand (an answer to a page's request may have to name it).
    func respond(to refusal: TransportRefusal, method: String, origin: String?) -> HTTPResponse

    /// A request ended without an answer: its client went away (mid-body, or while it waited),
    /// so every request is still counted once.
    func requestAbandoned(method: String)

    /// An answer was queued (every answer, refusals and prepared ones included), on the thread
    /// that queued it: keep it cheap. Its pointers are valid during the call only.
    func answered(_ request: AnsweredRequest)
}

extension HTTPResponder {
    /// Nothing kept by default.
    package func answered(_ request: AnsweredRequest) {}
}

/// An answered request as the transport saw it, read in place for `HTTPResponder.answered`.
package struct AnsweredRequest {
    /// The method as sent.
    package let method: UnsafePointer<CChar>
    /// The path as sent, still percent-encoded, without the query.
    package let path: UnsafePointer<CChar>
    /// The status queued.
    package let status: Int
    /// The peer's address (nil when libmicrohttpd has none).
    package let client: UnsafePointer<sockaddr>?
    /// Which version of the resource the answer carries, when its route said.
    package let served: ServedVersion?

    /// An answered request (the transport's, or a test's).
    package init(
        method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, status: Int, client: UnsafePointer<sockaddr>?,
        served: ServedVersion?
    ) {
        self.method = method
        self.path = path
        self.status = status
        self.client = client
        self.served = served
    }
}

/// Which version of a resource an answer carries (a feed's generation), and why it is not the
/// newest one when it is not: kept in a request history, never sent. It owns its fields' UTF-8
/// bytes in one allocation made once, so a history copies them per answer without touching a
/// `String`.
package final class ServedVersion: @unchecked Sendable {
    /// The version's id.
    package let id: String
    /// Why an older version was served (nil: the newest one was).
    package let fallbackReason: String?
    /// `id`'s bytes, then `fallbackReason`'s; immutable after `init`.
    private let bytes: UnsafeMutableRawBufferPointer
    private let idCount: Int
    private let reasonCount: Int

    /// A served version.
    package init(id: String, fallbackReason: String?) {
        self.id = id
        self.fallbackReason = fallbackReason
        let encoded = Array(id.utf8) + Array((fallbackReason ?? "").utf8)
        idCount = id.utf8.count
        reasonCount = encoded.count - idCount
        bytes = .allocate(byteCount: max(1, encoded.count), alignment: 1)
        bytes.copyBytes(from: encoded)
    }

    deinit { bytes.deallocate() }

    /// The id's UTF-8 bytes, valid while this object lives.
    package var idBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<idCount]) }

    /// The fallback reason's UTF-8 bytes (empty: none), valid while this object lives.
    package var fallbackReasonBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[idCount..<idCount + reasonCount])
    }
}

/// What the head of a request with a body decided.
package enum BodyAdmission: Sendable {
    /// Read the body; at most `limit` bytes of it when the route says (nil: the transport's limit).
    /// A multipart body's parts are announced to `parts` as they arrive.
    case accept(limit: Int?, parts: (any MultipartPartObserver)? = nil)
    /// Answer with this, without keeping the body.
    case refuse(HTTPResponse)
    /// The route takes no body: read it and drop it (bounded as a drain), then answer as usual.
    case discard
}
