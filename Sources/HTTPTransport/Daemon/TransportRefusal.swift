/// An answer the transport decides itself, before or instead of the responder: the responder
/// renders it (`HTTPResponder.respond(to:method:origin:)`), so every answer's text lives in one place.
package enum TransportRefusal: Error, Equatable, Sendable {
    /// The head's framing fields could be read differently by a proxy (RFC 9112 §6.3): 400, closes.
    case ambiguousFraming(FramingConflict)
    /// A transfer coding other than `chunked` alone (RFC 9112 §6.1), as sent: 501, closes.
    case unsupportedTransferCoding(String)
    /// The body is over the request's limit, in bytes: 413.
    case bodyTooLarge(limit: Int)
    /// A body sent where none is taken, past what is read and dropped (`BodyDrain`): 413.
    case bodyNotTaken
    /// Bodies in progress hold the server's in-flight budget (its limit, in bytes): 503.
    case inflightLimit(Int)
    /// Bodies in progress hold the server's budget of body bytes in memory (its limit): 503.
    case memoryLimit(Int)
    /// The query has more arguments than are read (at most `maxArguments`, fewer beside a long
    /// URL): 414, closes.
    case queryTooLong(maxArguments: Int)
    /// The server is shutting down; `started` tells whether the request may have taken effect: 503.
    case shuttingDown(started: Bool)
    /// A `multipart/form-data` body that cannot be parsed: 400.
    case malformedMultipart(MultipartFailure)
    /// More multipart parts than allowed (the limit): 413.
    case tooManyParts(Int)
    /// Multipart parts kept in memory together exceed this many bytes: 413.
    case memoryPartsTooLarge(limit: Int)
    /// A streamed body could not be written to the upload storage (why, in a few words): 507.
    case uploadNotStored(reason: String)

    /// Whether the connection must close after the answer: the body's end is unknown.
    package var closesConnection: Bool {
        switch self {
        case .ambiguousFraming, .unsupportedTransferCoding, .queryTooLong: return true
        default: return false
        }
    }
}

/// How a request's framing fields conflict, as the head pass found them.
package enum FramingConflict: Equatable, Sendable {
    /// `Content-Length` given more than once with different values.
    case differentLengths
    /// `Content-Length` beside `Transfer-Encoding`.
    case lengthAndCoding
    /// A field folded onto a second line (obs-fold), which can build a framing field's name.
    case folded
}

/// Why a multipart body could not be parsed.
package enum MultipartFailure: Equatable, Sendable {
    /// The `Content-Type` has no boundary.
    case noBoundary
    /// The body does not follow the multipart syntax.
    case unparsable
    /// The body ended before its closing boundary.
    case unterminated
}
