import HTTPTransport

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// A keep-alive HTTP/1.1 connection to a server on 127.0.0.1, just enough for fuzzing it: send
/// one request, read one response with a Content-Length body. Reconnects when the server closed.
/// Unchecked Sendable: a fuzz target uses it from one thread, one input at a time.
final class LoopbackConnection: @unchecked Sendable {
    /// A response as read off the wire.
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
    }

    /// Why no response could be read.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let port: UInt16
    private var socket: Int32 = -1

    init(port: UInt16) { self.port = port }

    deinit { disconnect() }

    /// Sends `request` (complete bytes) and reads the response; one retry on a fresh
    /// connection when the kept-alive one turns out to be closed. With `split`, the request goes
    /// in two writes, the first of `split` bytes, 0.5 ms apart, so the server mostly reads them
    /// apart (when it does not, the input is checked in one piece).
    func exchange(_ request: [UInt8], pausingAfter split: Int? = nil) throws(Failure) -> Response {
        if socket >= 0, let response = try? attempt(request, split) { return response }
        disconnect()
        return try attempt(request, split)
    }

    private func attempt(_ request: [UInt8], _ split: Int?) throws(Failure) -> Response {
        if socket < 0 { try connect() }
        if let split, split > 0, split < request.count {
            try send(Array(request[..<split]))
            usleep(500)
            try send(Array(request[split...]))
        } else {
            try send(request)
        }
        let response = try receive()
        if response.headers.contains(where: { $0.0.lowercased() == "connection" && $0.1.lowercased().contains("close") }
        ) {
            disconnect()
        }
        return response
    }

    private func connect() throws(Failure) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        // A server that never answers is a finding; libFuzzer's -timeout is longer than this.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        socket = fd
    }

    private func disconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += count
        }
    }

    private func receive() throws(Failure) -> Response {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var headerEnd: Int?
        var expected: Int?
        var head: (Int, [(String, String)])?
        while true {
            if headerEnd == nil, let end = find([13, 10, 13, 10], in: buffer) {
                headerEnd = end + 4
                head = try parseHead(Array(buffer[..<end]))
                guard
                    let length = head?.1.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) })
                else {
                    throw Failure(description: "response without Content-Length")
                }
                expected = end + 4 + length
            }
            if let expected, let head, buffer.count >= expected {
                return Response(status: head.0, headers: head.1, body: Array(buffer[headerEnd!..<expected]))
            }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw Failure(description: count == 0 ? "connection closed" : "recv: errno \(errno)")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    private func parseHead(_ bytes: [UInt8]) throws(Failure) -> (Int, [(String, String)]) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines.first ?? "")")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces())
        }
        return (status, headers)
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
