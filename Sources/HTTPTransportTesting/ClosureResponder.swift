import HTTPTransport

/// A responder for tests of the transport alone: a closure answers every request, every body is
/// admitted up to the transport's limit, nothing is prepared, and refusals are answered as
/// `application/problem+json` with their status, and the refusal's case as `type` and `detail`.
package final class ClosureResponder: HTTPResponder {
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let admission: @Sendable (HTTPRequest, Int?) -> BodyAdmission

    /// Answers with `handler`; `admission` judges bodies from their heads (default: accept all).
    package init(
        admission: @escaping @Sendable (HTTPRequest, Int?) -> BodyAdmission = { _, _ in .accept(limit: nil) },
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.handler = handler
        self.admission = admission
    }

    package func admitBody(_ head: HTTPRequest, declaredLength: Int?) -> BodyAdmission {
        admission(head, declaredLength)
    }

    package func preparedAnswer(_ head: RequestHead) -> PreparedAnswer? { nil }

    package func respond(to request: HTTPRequest) -> HTTPResponse { handler(request) }

    package func requestAbandoned(method: String) {}

    package func respond(to refusal: TransportRefusal, method: String, origin: String?) -> HTTPResponse {
        let status = Self.status(of: refusal)
        var headers = [("Content-Type", "application/problem+json")]
        if refusal.closesConnection { headers.append(("Connection", "close")) }
        let name = Self.name(of: refusal)
        let body = "{\"status\":\(status),\"type\":\"\(name)\",\"detail\":\"refused by the transport: \(name)\"}\n"
        return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }

    /// The status each refusal is answered with (as the application answers it).
    package static func status(of refusal: TransportRefusal) -> Int {
        switch refusal {
        case .ambiguousFraming, .malformedMultipart: return 400
        case .unsupportedTransferCoding: return 501
        case .queryTooLong: return 414
        case .bodyTooLarge, .bodyNotTaken, .tooManyParts, .memoryPartsTooLarge: return 413
        case .inflightLimit, .memoryLimit, .shuttingDown: return 503
        case .uploadNotStored: return 507
        }
    }

    private static func name(of refusal: TransportRefusal) -> String {
        switch refusal {
        case .ambiguousFraming: return "ambiguous-framing"
        case .unsupportedTransferCoding: return "unsupported-transfer-coding"
        case .bodyTooLarge: return "body-too-large"
        case .bodyNotTaken: return "body-not-taken"
        case .inflightLimit: return "inflight-limit"
        case .memoryLimit: return "memory-limit"
        case .queryTooLong: return "query-too-long"
        case .shuttingDown: return "shutting-down"
        case .malformedMultipart: return "malformed-multipart"
        case .tooManyParts: return "too-many-parts"
        case .memoryPartsTooLarge: return "memory-parts-too-large"
        case .uploadNotStored: return "upload-not-stored"
        }
    }
}
