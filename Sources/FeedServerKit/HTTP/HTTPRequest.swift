import CMicroHTTPD

/// Looks up request headers or query parameters on demand in libmicrohttpd's parsed request
/// (`MHD_lookup_connection_value`), so the hot path never copies fields it does not read.
///
/// Valid only while the access handler runs: a route must not keep the request beyond that.
struct RequestFields: @unchecked Sendable {
    private enum Source {
        case connection(OpaquePointer)
        /// Name/value pairs as libmicrohttpd would hand them over (query values still encoded).
        case given([(String, String)])
    }

    private let source: Source
    private let kind: MHD_ValueKind

    init(connection: OpaquePointer, kind: MHD_ValueKind) {
        source = .connection(connection)
        self.kind = kind
    }

    /// Fields without a connection, for fuzz targets and tests: the same decoding and lookup
    /// rules (first value wins, header names case-insensitive) over `pairs`.
    init(given pairs: [(String, String)], kind: MHD_ValueKind) {
        source = .given(pairs)
        self.kind = kind
    }

    /// The first value of `name` (headers: case-insensitive); query values are percent-decoded
    /// here, once, because the daemon is told to decode nothing itself.
    subscript(name: String) -> String? {
        switch source {
        case .connection(let connection):
            guard let value = MHD_lookup_connection_value(connection, kind, name) else { return nil }
            return decoded(String(cString: value))
        case .given(let pairs):
            return given(pairs, name)
        }
    }

    /// The same for a literal name, passed to libmicrohttpd without building a C string.
    subscript(name: StaticString) -> String? {
        guard case .connection(let connection) = source else { return self[name.description] }
        let found = name.withUTF8Buffer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count + 1) {
                MHD_lookup_connection_value(connection, kind, $0)
            }
        }
        guard let value = found else { return nil }
        return decoded(String(cString: value))
    }

    private func given(_ pairs: [(String, String)], _ name: String) -> String? {
        let match: ((String, String)) -> Bool = kind == .HEADER_KIND
            ? { $0.0.lowercased() == name.lowercased() }
            : { $0.0 == name }
        return pairs.first(where: match).flatMap { decoded($0.1) }
    }

    private func decoded(_ raw: String) -> String? {
        kind == .GET_ARGUMENT_KIND ? PercentDecoding.decode(raw, plusIsSpace: true) : raw
    }
}

/// One HTTP request as the router sees it: method, still-encoded path, decoded query, headers, body.
struct HTTPRequest: Sendable {
    /// `GET`, `PUT`, ... as sent.
    var method: String
    /// The path as received, still percent-encoded (decoded once per segment by the router).
    var rawPath: String
    /// Query parameters, percent-decoded; the first value wins for repeated names.
    var query: RequestFields
    /// Header fields.
    var headers: RequestFields
    /// The request body (empty for most reads and for multipart bodies).
    var body: [UInt8]
    /// The parts of a `multipart/form-data` body (parsed by `MHD_PostProcessor`); nil otherwise.
    var parts: [MultipartPart]?
    /// The request id, also sent as `X-Request-Id` and written to the access log.
    var id: String
    /// True when the handler is asked again after the request was suspended and woken.
    var resumed = false

    /// `Content-Type` without parameters, lowercased (`application/json; charset=utf-8` → `application/json`).
    var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingSpaces().lowercased()
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
