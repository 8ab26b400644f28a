import HTTPTransport

/// A small JSON document a route takes as its body (a fault order, a widget profile, a journal
/// expectation): judged from the head, kept in memory, refused with the same two problems.
struct SmallJSONBody: Sendable {
    /// What the document is, as a sentence names it (`a fault order`).
    let name: String
    /// A document to show in the 415's detail.
    let example: String
    /// The largest body.
    let limit: Int

    /// The route's body policy.
    var policy: BodyPolicy {
        BodyPolicy(
            limits: ["application/json": limit], unsupported: { [self] _ in unsupported },
            tooLarge: { [self] bytes, limit in tooLarge(bytes: bytes, limit: limit) })
    }

    /// 415 for a body that is not JSON.
    var unsupported: Problem {
        Problem(
            status: 415, type: "unsupported-media-type", title: "Unsupported media type",
            detail: "Send \(name) as application/json, for example \(example).")
    }

    /// 413 for a body over its limit.
    func tooLarge(bytes: Int, limit: Int) -> Problem {
        Problem(
            status: 413, type: "body-too-large", title: "Request body too large",
            detail: "\(name.prefix(1).uppercased() + name.dropFirst()) has \(bytes) bytes; the limit is \(limit).")
    }

    /// The 415 unless the request is JSON.
    func requireJSON(_ request: HTTPRequest) throws(Problem) {
        guard request.mediaType == "application/json" else { throw unsupported }
    }
}
