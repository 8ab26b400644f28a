import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import HTTPTransportTesting

@testable import FeedServerKit

/// `multipart/form-data` bodies through the real daemon: libmicrohttpd's post processor feeding
/// `MultipartCollector`, over a loopback connection to an in-process `HTTPDaemon` whose handler
/// records the parts it was given.
///
/// Input byte 0, lowest bit clear: the rest describes parts (split on 0xFF: a selector byte, then
/// the part's bytes), which are encoded as a well-formed body. Set: the rest is sent as the body,
/// with `boundary=B`. Its second bit picks a daemon that streams asset parts to (in-memory)
/// upload files, as the server does, instead of keeping every part in memory; its third bit sends
/// the request in two writes, the first ending as many 32nds into the body as its top five bits
/// say, so libmicrohttpd hands the parts over in pieces cut there.
enum MultipartTarget {
    static let target = FuzzTarget(
        name: "multipart",
        summary:
            "multipart/form-data through libmicrohttpd into MultipartCollector, parts in memory or streamed to upload "
            + "files, the body in one write or two: a well-formed body yields exactly its "
            + "parts (name, filename, content type, bytes; more than --max-parts is a 413), except that a part with no "
            + "bytes followed by one with the same name and filename reads as one part (documented); any body yields "
            + "200 with parts no larger than the body, or a 400/413 problem with a JSON body.",
        check: check)

    static let maxParts = 6
    static let names = ["payload", "a", "image", "x.png", "c d", "\u{e9}", "", "b"]
    static let contentTypes = [
        "image/png", "application/json", "text/plain; charset=utf-8", "application/octet-stream",
    ]

    /// Where the streaming daemon's asset parts go.
    private static let uploads = MemoryUploads()
    /// A daemon that keeps every part in memory, and a connection to it, started on first use.
    private static let inMemory = start(uploads: nil)
    /// A daemon that streams asset parts to `uploads`, as the server does.
    private static let streaming = start(uploads: uploads)

    private static func start(uploads: MemoryUploads?) -> (daemon: HTTPDaemon, connection: LoopbackConnection)? {
        var settings = TransportSettings()
        settings.port = 0
        settings.threads = 2
        settings.maxParts = maxParts
        settings.maxBodyBytes = 1 << 20
        settings.accessLog = false
        let responder = ClosureResponder { request in
            // Recorded under the request's number (its path), and echoed: a check reads the parts
            // of its own request, and a response that answers another request is a finding.
            let parts = request.parts?.map { part in
                var part = part
                guard let file = part.file else { return part }
                if let bytes = uploads?.take(file.path) {
                    part.bytes = bytes
                } else {
                    filesMissing.withLock { _ = $0.insert(request.rawPath) }
                }
                return part
            }
            received.withLock { $0[request.rawPath] = parts }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain")], body: Array(request.rawPath.utf8))
        }
        guard let daemon = try? HTTPDaemon(settings: settings, uploads: uploads, responder: responder) else {
            return nil
        }
        return (daemon, LoopbackConnection(port: daemon.port))
    }

    /// The parts the handler saw, by request path. Not one slot for "the last request": a
    /// request sent on a connection that the client then gave up on (`LoopbackConnection` retries
    /// on a fresh one) may still reach the handler later, while the next input is checked.
    private static let received = Lock<[String: [MultipartPart]?]>([:])
    /// Requests whose handler found a part's upload file missing (never stored, or read twice).
    private static let filesMissing = Lock<Set<String>>([])
    /// Numbers the requests (`/upload/<n>`), one input at a time.
    private static let sequence = Lock(0)

    /// A part as generated from the input (and as the collector should report it).
    struct Part: Equatable {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes: [UInt8]
    }

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let mode = input.first ?? 0
        uploads.removeAll()
        guard let server = mode & 2 == 0 ? inMemory : streaming else {
            throw PropertyViolation(property: "the daemon starts on a loopback port", observed: "it did not")
        }
        let sending = Sending(connection: server.connection, split: mode & 4 == 0 ? nil : Int(mode >> 3))
        if mode & 1 == 1 {
            try checkRawBody(Array(input.dropFirst()), sending)
        } else {
            try checkGeneratedParts(parts(from: Array(input.dropFirst())), sending)
        }
    }

    /// How a body is sent: on which connection, and in one write (nil) or two, the first ending
    /// `split` 32nds into the body.
    struct Sending {
        let connection: LoopbackConnection
        let split: Int?
    }

    private static func checkGeneratedParts(_ parts: [Part], _ sending: Sending) throws(PropertyViolation) {
        let (body, boundary) = encode(parts)
        let (response, path) = try send(body, boundary: boundary, sending)
        let expected = collected(parts)
        guard expected.count <= maxParts else {
            try expect(
                response.status == 413, "more parts than --max-parts is a 413",
                observed: "\(response.status) for \(expected.count) parts")
            return try expectProblem(response)
        }
        try expect(
            response.status == 200, "a well-formed multipart body is accepted",
            observed: "\(response.status) \(shown(response.body)) for \(shown(body))")
        let got = try handlerParts(for: path, response: response)?.map {
            Part(name: $0.name, filename: $0.filename, contentType: $0.contentType, bytes: $0.bytes)
        }
        try expect(
            got == expected, "the collector yields exactly the parts that were sent",
            observed: "got \(describe(got ?? [])) expected \(describe(expected)) for \(shown(body))")
    }

    private static func checkRawBody(_ body: [UInt8], _ sending: Sending) throws(PropertyViolation) {
        let (response, path) = try send(body, boundary: "B", sending)
        switch response.status {
        case 200:
            let parts = try handlerParts(for: path, response: response)
            try expect(parts != nil, "an accepted multipart body reaches the handler with its parts")
            let total = parts?.reduce(0) { $0 + $1.bytes.count } ?? 0
            try expect(
                total <= body.count, "parts never hold more bytes than the body", observed: "\(total) > \(body.count)")
            try expect(
                (parts?.count ?? 0) <= maxParts, "never more parts than --max-parts", observed: "\(parts?.count ?? 0)")
        case 400, 413:
            try expectProblem(response)
        default:
            throw PropertyViolation(
                property: "a multipart body is answered 200, 400 or 413",
                observed: "\(response.status) for \(shown(body))")
        }
    }

    /// The parts the handler was given for the request to `path`, once the response is known to
    /// answer that request (a `200` echoes its path).
    private static func handlerParts(
        for path: String, response: LoopbackConnection.Response
    ) throws(PropertyViolation) -> [MultipartPart]? {
        try expect(
            response.body == Array(path.utf8), "a response answers the request it was read for",
            observed: "\(shown(response.body)) for \(path)")
        let seen = received.withLock { received in
            defer { received.removeAll() }
            return received[path]
        }
        try expect(
            seen != nil, "the handler was given the request that was sent", observed: "no handler call for \(path)")
        let missing = filesMissing.withLock { missing in
            defer { missing.removeAll() }
            return missing.contains(path)
        }
        try expect(!missing, "each part streamed to a file reaches the handler with its file", observed: path)
        return seen ?? nil
    }

    private static func send(
        _ body: [UInt8], boundary: String, _ sending: Sending
    ) throws(PropertyViolation) -> (LoopbackConnection.Response, path: String) {
        let number = sequence.withLock { number in
            number += 1
            return number
        }
        let path = "/upload/\(number)"
        let head =
            "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        let split = sending.split.map { head.utf8.count + body.count * $0 / 32 }
        do {
            return (try sending.connection.exchange(Array(head.utf8) + body, pausingAfter: split), path)
        } catch {
            throw PropertyViolation(
                property: "every multipart request gets a response", observed: "\(error) for \(shown(body))")
        }
    }

    private static func expectProblem(_ response: LoopbackConnection.Response) throws(PropertyViolation) {
        let body = try? JSONParser.parse(response.body)
        try expect(
            body?["status"]?.integerValue == Int64(response.status) && body?["detail"]?.stringValue != nil,
            "a refused multipart body gets a problem with its status and a detail", observed: shown(response.body))
    }

    /// Parts described by the input: each piece between 0xFF bytes is a selector byte (name,
    /// filename, content type) followed by the part's bytes.
    static func parts(from bytes: [UInt8]) -> [Part] {
        bytes.split(separator: 0xFF, omittingEmptySubsequences: false).prefix(maxParts + 2).map { piece in
            let selector = piece.first ?? 0
            let name = names[Int(selector & 7)]
            let filename = selector & 0x08 != 0 ? names[Int((selector >> 4) & 7)] + ".bin" : nil
            let contentType = selector & 0x80 != 0 ? contentTypes[Int((selector >> 4) & 3)] : nil
            return Part(name: name, filename: filename, contentType: contentType, bytes: Array(piece.dropFirst()))
        }
    }

    /// A well-formed body for `parts` and a boundary that occurs in none of them.
    static func encode(_ parts: [Part]) -> (body: [UInt8], boundary: String) {
        var boundary = "fuzz-boundary"
        while parts.contains(where: { contains(Array(boundary.utf8), in: $0.bytes) }) { boundary += "x" }
        var body: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            if let filename = part.filename { head += "; filename=\"\(filename)\"" }
            head += "\r\n"
            if let contentType = part.contentType { head += "Content-Type: \(contentType)\r\n" }
            body += Array((head + "\r\n").utf8) + part.bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return (body, boundary)
    }

    /// What the collector's documented rule makes of `parts`: a part with no bytes followed by
    /// one with the same name and filename is one part (libmicrohttpd announces a part with an
    /// empty piece, so the two cannot be told apart); it keeps the first one's content type.
    static func collected(_ parts: [Part]) -> [Part] {
        var result: [Part] = []
        for part in parts {
            if let last = result.last, last.bytes.isEmpty, last.name == part.name, last.filename == part.filename {
                result[result.count - 1].bytes = part.bytes
            } else {
                result.append(part)
            }
        }
        return result
    }

    private static func describe(_ parts: [Part]) -> String {
        parts.map {
            "(\(shown($0.name)), \($0.filename.map(shown) ?? "-"), \($0.contentType ?? "-"), \($0.bytes.count) bytes)"
        }
        .joined(separator: " ")
    }

    private static func contains(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
