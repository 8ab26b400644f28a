import CMicroHTTPD

/// What the state machine needs to know of a request head.
package struct HeadFacts: Equatable, Sendable {
    /// Why the framing cannot be trusted (nil: it can).
    package var framingRefusal: TransportRefusal?
    /// The declared `Content-Length` (nil: none, or chunked).
    package var declaredLength: Int?
    /// Whether a body follows: a positive length, or chunked.
    package var carriesBody: Bool
    /// Whether the client waits for `100 Continue`.
    package var expectsContinue: Bool
    /// Whether the server is shutting down (a new request is not started).
    package var shuttingDown: Bool
    /// Whether the query had more arguments than are read (`maxQueryArguments`).
    package var queryRefused = false

    /// The most query arguments a request may have (fewer beside a long URL): the shim empties a
    /// query past it before libmicrohttpd would run out of the connection's memory parsing it.
    package static let maxQueryArguments = Int(CMicroHTTPD_MAX_QUERY_ARGUMENTS)

    /// Facts given directly (tests).
    package init(
        framingRefusal: TransportRefusal? = nil, declaredLength: Int? = nil, carriesBody: Bool = false,
        expectsContinue: Bool = false, shuttingDown: Bool = false, queryRefused: Bool = false
    ) {
        self.queryRefused = queryRefused
        self.framingRefusal = framingRefusal
        self.declaredLength = declaredLength
        self.carriesBody = carriesBody
        self.expectsContinue = expectsContinue
        self.shuttingDown = shuttingDown
    }

    /// The facts of a head as `CMicroHTTPD_read_head` found them.
    init(_ head: CMicroHTTPD_RequestHead, shuttingDown: Bool) {
        let framing = Framing(head)
        framingRefusal = framing.refusal
        declaredLength = framing.declaredLength
        carriesBody = framing.carriesBody
        expectsContinue = head.expect.map { String(cString: $0).lowercased() == "100-continue" } ?? false
        self.shuttingDown = shuttingDown
    }
}

/// A request's framing fields, as `CMicroHTTPD_read_head` found them.
struct Framing {
    let contentLength: UnsafePointer<CChar>?
    let transferEncoding: UnsafePointer<CChar>?
    /// How many `Transfer-Encoding` fields the request has.
    let codingFields: Int
    /// How the framing fields conflict (`CMicroHTTPD_FRAMING_CLEAR`: they do not).
    let conflict: CMicroHTTPD_Framing

    init(_ head: CMicroHTTPD_RequestHead) {
        contentLength = head.content_length
        transferEncoding = head.transfer_encoding
        codingFields = Int(head.transfer_encodings)
        conflict = head.framing
    }

    /// The refusal for framing a proxy could read differently, or nil.
    var refusal: TransportRefusal? {
        switch conflict {
        case CMicroHTTPD_FRAMING_DIFFERENT_LENGTHS: return .ambiguousFraming(.differentLengths)
        case CMicroHTTPD_FRAMING_LENGTH_AND_CODING: return .ambiguousFraming(.lengthAndCoding)
        case CMicroHTTPD_FRAMING_FOLDED: return .ambiguousFraming(.folded)
        default: return unsupportedCoding
        }
    }

    /// The declared `Content-Length`, nil when absent or not a number. libmicrohttpd takes any
    /// 64-bit length: one beyond `Int.max` reads as `Int.max`, more than every limit, so it is
    /// judged from the head like any other.
    var declaredLength: Int? {
        guard let contentLength else { return nil }
        let text = String(cString: contentLength).trimmingSpaces()
        return Int(text) ?? UInt64(text).map { Int(clamping: $0) }
    }

    /// A transfer coding other than `chunked` alone (RFC 9112 §6.1): libmicrohttpd would wait for
    /// a body it cannot delimit, holding the connection until the client gives up.
    ///
    /// Repeated `Transfer-Encoding` fields are one list (RFC 9110 §5.3): `chunked` on one line and
    /// `gzip` on the next is `chunked, gzip`, never `chunked` alone (libmicrohttpd reads only the
    /// first line, and would frame the body as chunked where a proxy may not).
    ///
    /// `chunked` is matched as libmicrohttpd matches it, the whole value without trimming: it reads
    /// `chunked ` (a trailing space) as no coding at all and would wait for the connection's end,
    /// where a proxy trims it and frames the body as chunked.
    private var unsupportedCoding: TransportRefusal? {
        guard let transferEncoding else { return nil }
        var coding = String(cString: transferEncoding).lowercased()
        guard coding != "chunked" || codingFields > 1 else { return nil }
        if codingFields > 1 {
            coding += " (and \(codingFields - 1) more Transfer-Encoding field\(codingFields > 2 ? "s" : ""))"
        }
        return .unsupportedTransferCoding(String(coding.prefix(100)))
    }

    /// Whether the request carries a body: a positive `Content-Length`, or chunked.
    var carriesBody: Bool {
        if let declaredLength { return declaredLength > 0 }
        return transferEncoding.map { String(cString: $0).lowercased().contains("chunked") } ?? false
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    package func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}
