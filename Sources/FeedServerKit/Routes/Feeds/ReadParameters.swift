import HTTPTransport

/// The parameters reads and publishes share: `schemaVersion` (query) and `X-Schema-Version`
/// (header), and the long-poll's `wait`.
enum ReadParameters {
    /// Longest long-poll wait, in seconds (longer requests are capped). With its jitter (up to
    /// 1/16 more, 58.4 s at most) a whole wait stays under the 60 s a cache in front gives a
    /// backend for its first byte (Varnish's `first_byte_timeout`, nginx's `proxy_read_timeout`).
    static let maxWaitSeconds = 55.0

    /// The version given (nil when neither is present).
    static func schemaVersion(header: String?, query: String?) throws(Problem) -> Int? {
        if header == nil, query == nil { return nil }  // every plain read
        var found: Int?
        for (source, text) in [("X-Schema-Version header", header), ("schemaVersion parameter", query)] {
            guard let text else { continue }
            guard let value = Int32(text.trimmingSpaces()), value >= 0 else {
                throw Problem.invalidSchemaVersion(source: source, text: text)
            }
            if let earlier = found, earlier != Int(value) {
                throw Problem.conflictingSchemaVersions(header: earlier, query: Int(value))
            }
            found = Int(value)
        }
        return found
    }

    /// A long-poll's `?etag=` as an `If-None-Match` value: the `ETag` as the client got it
    /// (quotes included), or the bare fingerprint, which needs no quotes escaped in a URL.
    static func entityTag(_ text: String) -> String {
        text.hasPrefix("\"") || text.hasPrefix("W/") ? text : Conditional.entityTag(text)
    }

    /// `?wait=<seconds>` capped at `maxWaitSeconds`, plus up to 1/16 of it as jitter so that
    /// waiters parked together do not all come back in the same instant; nil without `wait`.
    static func waitSeconds(_ text: String?) throws(Problem) -> Double? {
        guard let text else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
            throw Problem.invalidParameter("wait must be a number of seconds, 0 or more (got '\(text)').")
        }
        let capped = min(seconds, maxWaitSeconds)
        return capped + Double.random(in: 0...(capped / 16))
    }
}
