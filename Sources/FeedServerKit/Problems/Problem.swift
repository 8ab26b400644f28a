import FeedStore
import HTTPTransport

/// An RFC 9457 problem detail, sent as `application/problem+json`.
struct Problem: Error, Sendable {
    /// HTTP status code.
    var status: Int
    /// A short slug naming the kind of problem; becomes the `type` URI.
    var type: String
    /// A short human summary that does not change between occurrences.
    var title: String
    /// What exactly went wrong this time, and how to fix it.
    var detail: String
    /// Extra headers (for example `Allow` on 405).
    var headers: [(String, String)] = []
    /// Extra members in the JSON body (for example `offset` on invalid JSON).
    var extensions: [(String, JSONValue)] = []

    /// What a client sent, as a detail quotes it: at most `limit` Unicode scalars (a count of
    /// characters would let one combining sequence carry kilobytes), controls, bidirectional and
    /// other format characters escaped (`LogSafe.line`), so a terminal shows what was sent.
    static func shown(_ text: String, limit: Int = 64) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return LogSafe.line(text) }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars.prefix(limit - 1))
        return LogSafe.line(String(kept)) + "…"
    }

    /// The `type` member: a stable URI per kind of problem, documented in docs/http-api.md.
    var typeURI: String { "https://feed-server.invalid/problems/\(type)" }

    /// The `application/problem+json` document, one line: what a response carries and what the
    /// command line prints for a refused publish.
    var body: [UInt8] {
        var members = [
            JSONMember("type", .string(typeURI)), JSONMember("title", .string(title)),
            JSONMember("status", .number(String(status))), JSONMember("detail", .string(detail)),
        ]
        members += extensions.map { JSONMember($0.0, $0.1) }
        var body = CompactJSON.bytes(.object(members))
        body.append(0x0A)
        return body
    }

    /// The response carrying this problem.
    var response: HTTPResponse {
        // nosniff: `detail` quotes what the client sent, which must never be sniffed into HTML.
        return HTTPResponse(
            status: status,
            headers: [
                ("Content-Type", "application/problem+json"), ("X-Content-Type-Options", "nosniff"),
                ("Cache-Control", "no-store"),
            ] + headers, body: body)
    }

    /// 404 for a path no route serves.
    static func notFound(_ detail: String) -> Problem {
        Problem(status: 404, type: "not-found", title: "Not found", detail: detail)
    }

    /// 405 with the `Allow` header listing what the resource supports, `OPTIONS` included.
    static func methodNotAllowed(_ method: String, route: Route) -> Problem {
        Problem(
            status: 405, type: "method-not-allowed", title: "Method not allowed",
            detail: "\(method) is not supported here; use \(route.allowed.joined(separator: ", ")).",
            headers: [("Allow", route.allowHeader)])
    }

    /// 413 for a payload (or the feed.json made from it) beyond `--max-payload-bytes`.
    static func payloadTooLarge(_ detail: String) -> Problem {
        Problem(status: 413, type: "payload-too-large", title: "Payload too large", detail: detail)
    }

    /// 400 for a malformed request parameter.
    static func badRequest(_ type: String, _ title: String, _ detail: String) -> Problem {
        Problem(status: 400, type: type, title: title, detail: detail)
    }
}
