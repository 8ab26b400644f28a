import HTTPTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--cors-origin`: lets pages served from other origins call the API (off by default).
///
/// `*`, or a single origin, is named on every answer. That header is the same for every request
/// (a browser compares it with its own origin and refuses a mismatch), so cached reads keep the
/// one prepared answer they share. `Access-Control-Allow-Origin` holds one origin, never a list
/// (a browser refuses `http://a, http://b`), so with several origins an answer names the
/// request's `Origin` when it is listed and none otherwise, and every answer says `Vary: Origin`
/// so that a cache keeps one answer per origin. A prepared answer is shared by every request, so
/// it is built only from answers that name no origin, and a request whose answer would name one
/// is routed instead (`namesOrigin`).
struct CORSPolicy: Sendable {
    private enum Allowed: Sendable {
        /// `*` or one origin: the same headers on every answer.
        case fixed(String)
        /// Several origins, each as a browser serializes it, as text and as bytes.
        case listed([String], bytes: [[UInt8]])
    }

    private let allowed: Allowed

    /// The origins allowed, as answers name them (`["*"]` for any).
    var origins: [String] {
        switch allowed {
        case .fixed(let origin): return [origin]
        case .listed(let origins, _): return origins
        }
    }

    /// A mistake in `--cors-origin`, said the way the usage message prints it.
    struct InvalidOrigin: Error, CustomStringConvertible {
        let description: String
    }

    private static let exposed = (
        "Access-Control-Expose-Headers", "ETag, Location, X-Feed-Generation, X-Feed-Fallback, X-Request-Id"
    )

    /// Parses `*`, or origins separated by commas (blanks around each are ignored). An origin is
    /// `http://` or `https://`, a host and an optional port, and nothing else: that is all a
    /// browser's `Origin` ever holds, so anything more could never match.
    init(parsing text: String) throws(InvalidOrigin) {
        let members = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        if members.contains("*") {
            guard members.count == 1 else {
                throw InvalidOrigin(
                    description: "'*' allows every origin and stands alone, not in a list (got '\(text)')")
            }
            allowed = .fixed("*")
            return
        }
        var origins: [String] = []
        for member in members {
            let origin = try Self.origin(member, in: text)
            if !origins.contains(origin) { origins.append(origin) }
        }
        allowed = origins.count == 1 ? .fixed(origins[0]) : .listed(origins, bytes: origins.map { Array($0.utf8) })
    }

    /// Adds the CORS headers to the answer to `request`.
    func decorate(_ response: inout HTTPResponse, request: HTTPRequest) {
        guard case .listed(_, let bytes) = allowed else { return decorate(&response, listed: nil) }
        let index = request.headers.withBytes(of: "Origin") { $0.flatMap { Self.index(of: $0, in: bytes) } }
        decorate(&response, listed: index)
    }

    /// The same for an answer whose request is known only by its `Origin` (a transport refusal).
    func decorate(_ response: inout HTTPResponse, origin: String?) {
        guard case .listed(_, let bytes) = allowed, var origin else { return decorate(&response, listed: nil) }
        decorate(&response, listed: origin.withUTF8 { Self.index(of: $0, in: bytes) })
    }

    /// Adds the headers, naming listed origin `index` when there is one.
    private func decorate(_ response: inout HTTPResponse, listed index: Int?) {
        switch allowed {
        case .fixed(let origin):
            response.headers.append(("Access-Control-Allow-Origin", origin))
            if origin != "*" { response.headers.append(("Vary", "Origin")) }
            response.headers.append(Self.exposed)
        case .listed(let origins, _):
            response.headers.append(("Vary", "Origin"))
            guard let index else { return }
            response.headers.append(("Access-Control-Allow-Origin", origins[index]))
            response.headers.append(Self.exposed)
            // Named for this request alone: the answer shared by every request must never carry it.
            response.prepared = nil
        }
    }

    /// Whether the answer to a request with this `Origin` names it, so no prepared answer fits.
    /// Runs only for requests that send an `Origin`: a byte comparison per listed origin.
    func namesOrigin(_ origin: UnsafePointer<CChar>) -> Bool {
        guard case .listed(_, let bytes) = allowed else { return false }
        let count = strlen(origin)
        return origin.withMemoryRebound(to: UInt8.self, capacity: count) {
            Self.index(of: UnsafeBufferPointer(start: $0, count: count), in: bytes) != nil
        }
    }

    /// The preflight answer for a route.
    func preflight(_ route: Route) -> HTTPResponse {
        HTTPResponse(
            status: 204,
            headers: [
                ("Access-Control-Allow-Methods", route.allowed.joined(separator: ", ")),
                (
                    "Access-Control-Allow-Headers",
                    "Authorization, Content-Type, If-Match, If-None-Match, X-Schema-Version, X-Request-Id, "
                        + "Last-Event-ID"
                ),
                ("Access-Control-Max-Age", "600"),
                ("Allow", route.allowHeader),
            ])
    }

    /// Which listed origin `sent` is, byte for byte (a browser sends the serialized form kept).
    private static func index(of sent: UnsafeBufferPointer<UInt8>, in listed: [[UInt8]]) -> Int? {
        guard let base = sent.baseAddress else { return nil }
        for index in listed.indices where listed[index].count == sent.count {
            if listed[index].withUnsafeBufferPointer({ memcmp(base, $0.baseAddress!, sent.count) == 0 }) {
                return index
            }
        }
        return nil
    }

    // MARK: Parsing one origin

    /// `member` as a browser serializes an origin (RFC 6454 §6.1): scheme and host in lower case,
    /// the port left out when it is the scheme's default.
    private static func origin(_ member: String, in text: String) throws(InvalidOrigin) -> String {
        func refuse(_ reason: String) -> InvalidOrigin {
            let quoted = member == text ? "'\(member)'" : "'\(member)' (in '\(text)')"
            return InvalidOrigin(
                description:
                    "\(quoted) is not an origin: \(reason); an origin is http:// or https://, a host and an optional "
                    + "port, such as http://localhost:3000 (several separated by commas, or * alone for any)")
        }
        guard !member.isEmpty else { throw refuse("it is empty") }
        guard let separator = member.firstRange(of: "://") else { throw refuse("it has no scheme") }
        let scheme = member[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("its scheme must be http or https") }
        let authority = String(member[separator.upperBound...])
        if let cut = authority.firstIndex(where: { "/?#".contains($0) }) {
            let bare = "\(scheme)://\(authority[..<cut])"
            throw refuse("a browser's Origin has no path, query or fragment (use '\(bare)')")
        }
        guard !authority.contains("@") else { throw refuse("a browser's Origin has no user name or password") }
        let (host, port) = try hostAndPort(authority, refuse)
        let isDefault = port == nil || (scheme == "http" && port == 80) || (scheme == "https" && port == 443)
        return "\(scheme)://\(host)" + (isDefault ? "" : ":\(port!)")
    }

    /// The host (lower case; an IPv6 address in brackets) and the port, if any.
    private static func hostAndPort(
        _ authority: String, _ refuse: (String) -> InvalidOrigin
    ) throws(InvalidOrigin) -> (String, Int?) {
        let host: Substring
        var rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("its IPv6 address has no ']'") }
            let address = authority[authority.index(after: authority.startIndex)..<close]
            guard !address.isEmpty, address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw refuse("'\(address)' is not an IPv6 address")
            }
            host = authority[...close]
            rest = authority[authority.index(after: close)...]
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            host = authority[..<colon]
            rest = authority[colon...]
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            let isHostCharacter: (Character) -> Bool = {
                $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")
            }
            guard !host.isEmpty else { throw refuse("it has no host") }
            guard labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isHostCharacter) }) else {
                throw refuse(
                    "'\(host)' is not a host name (letters, digits, '-' and '_' between dots; a name in another "
                        + "script in its xn-- form)")
            }
        }
        guard !rest.isEmpty else { return (host.lowercased(), nil) }
        guard rest.first == ":" else { throw refuse("'\(rest)' follows its host") }
        rest = rest.dropFirst()
        guard !rest.isEmpty, rest.count <= 5, rest.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(rest),
            (1...65535).contains(port)
        else {
            throw refuse("its port must be a number from 1 to 65535 (got '\(rest)')")
        }
        return (host.lowercased(), port)
    }
}
