import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the wire.
struct WireResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

struct HTTPTestError: Error, CustomStringConvertible {
    let description: String
}

/// A minimal HTTP/1.1 client over a real TCP socket: sends exactly the bytes a test asks for
/// (raw paths included), and can reuse one connection to prove keep-alive.
final class HTTPTestConnection: @unchecked Sendable {  // used by one thread at a time
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// `timeoutSeconds`: how long a read waits for bytes before it fails; `receiveBufferBytes`:
    /// the socket's receive buffer, set before connecting (a small one makes a stalled reader).
    init(port: UInt16, host: String = "127.0.0.1", timeoutSeconds: Int = 20, receiveBufferBytes: Int32? = nil) throws {
        // Close-on-exec: a child another test spawns meanwhile (a hook's `sleep 5 &`) would keep the
        // connection open after this test closes it.
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestError(description: "socket failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: `fd` is already stored, so a throw runs deinit, which closes it. Closing
        // it twice could close a descriptor another thread (an in-process server) just opened.
        guard result == 0 else {
            throw HTTPTestError(description: "connect to port \(port) failed: errno \(errno)")
        }
    }

    /// Ends the connection now, as a client going away does (the descriptor is closed in deinit).
    func shutDown() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { close(fd) }

    /// Sends raw bytes.
    func sendRaw(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw HTTPTestError(description: "send failed: errno \(errno)") }
            sent += count
        }
    }

    /// Sends one request and reads its response.
    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> WireResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "PUT" || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try sendRaw(Array(head.utf8) + body)
        return try readResponse(expectBody: method != "HEAD")
    }

    /// Reads one response (Content-Length framed, or until close). `lengthAfterNotModified` reads
    /// a `304` as OkHttp does (its `promisesBody`, "for best compatibility") and wrk's http_parser
    /// too: a `Content-Length` there is that many body bytes to read.
    func readResponse(expectBody: Bool = true, lengthAfterNotModified: Bool = false) throws -> WireResponse {
        let headerEnd = try fill(until: { $0.firstRange(of: [13, 10, 13, 10]) })
        let headText = String(decoding: buffer[..<headerEnd.lowerBound], as: UTF8.self)
        buffer.removeSubrange(..<headerEnd.upperBound)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw HTTPTestError(description: "bad status line")
        }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = WireResponse(status: status, headers: headers, body: [])
        guard expectBody, status != 304 || lengthAfterNotModified, status != 204 else { return response }
        if status == 304, response.header("Content-Length") == nil { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            _ = try fill(until: { $0.count >= length ? length : nil })
            response.body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
        } else {
            while try receive() > 0 {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Reads raw bytes (a streamed body, chunk framing included) until `needle` has arrived;
    /// returns everything read so far.
    func readUntil(_ needle: String) throws -> String {
        try readUntil(needle, occurrence: 1)
    }

    /// Reads until everything read holds `needle` `occurrence` times; returns everything read.
    func readUntil(_ needle: String, occurrence: Int) throws -> String {
        let bytes = Array(needle.utf8)
        _ = try fill(until: { $0.ranges(of: bytes).count >= occurrence ? true : nil })
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Reads until the server closes the connection; returns everything read.
    func readToEnd() throws -> String {
        while try receive() > 0 {}
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Whether the server has closed the connection (reads EOF within `seconds`).
    func isClosedByPeer(within seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    /// What became of the connection, without waiting: an answer waiting to be read, closed by
    /// the server, still open, or `recv`'s error (reset by the server, or a descriptor closed in
    /// this process), for a failure message.
    func fate() -> String {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        let error = errno
        switch count {
        case 1...: return "an answer arrived"
        case 0: return "the server closed the connection unanswered"
        default:
            if error == EAGAIN || error == EWOULDBLOCK { return "the connection is still open" }
            return "recv failed: \(String(cString: strerror(error)))"
        }
    }

    private func fill<T>(until found: ([UInt8]) -> T?) throws -> T {
        while true {
            if let value = found(buffer) { return value }
            guard try receive() > 0 else { throw HTTPTestError(description: "connection closed early") }
        }
    }

    private func receive() throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw HTTPTestError(description: "recv failed: errno \(errno)") }
        buffer.append(contentsOf: chunk.prefix(count))
        return count
    }
}

/// One-shot requests on a fresh connection each.
struct HTTPTestClient {
    let port: UInt16
    /// How long each read waits for bytes before it fails.
    var timeoutSeconds = 20

    init(port: UInt16, timeoutSeconds: Int = 20) {
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    func get(_ path: String, headers: [(String, String)] = []) throws -> WireResponse {
        try HTTPTestConnection(port: port, timeoutSeconds: timeoutSeconds).request("GET", path, headers: headers)
    }

    func head(_ path: String, headers: [(String, String)] = []) throws -> WireResponse {
        try HTTPTestConnection(port: port, timeoutSeconds: timeoutSeconds).request("HEAD", path, headers: headers)
    }

    func put(_ path: String, json: String, headers: [(String, String)] = []) throws -> WireResponse {
        try HTTPTestConnection(port: port, timeoutSeconds: timeoutSeconds).request(
            "PUT", path, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> WireResponse {
        try HTTPTestConnection(port: port, timeoutSeconds: timeoutSeconds)
            .request(method, path, headers: headers, body: body)
    }
}

/// A `multipart/form-data` body built by hand, as curl -F sends it.
struct MultipartBody {
    let boundary = "feedservertestboundary\(UInt32.random(in: 0...UInt32.max))"
    private(set) var bytes: [UInt8] = []

    mutating func field(_ name: String, _ value: String, contentType: String? = nil) {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        bytes += Array((head + "\r\n").utf8) + Array(value.utf8) + Array("\r\n".utf8)
    }

    mutating func file(
        _ name: String, filename: String, _ data: [UInt8], contentType: String = "application/octet-stream"
    ) {
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"\r\nContent-Type: \(contentType)\r\n\r\n"
        bytes += Array(head.utf8) + data + Array("\r\n".utf8)
    }

    var finished: [UInt8] { bytes + Array("--\(boundary)--\r\n".utf8) }
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }
}

extension HTTPTestClient {
    func putMultipart(_ path: String, _ body: MultipartBody) throws -> WireResponse {
        try request("PUT", path, headers: [("Content-Type", body.contentType)], body: body.finished)
    }
}
