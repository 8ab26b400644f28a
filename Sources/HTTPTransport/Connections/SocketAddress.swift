#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address to bind, resolved from a host literal or name.
struct SocketAddress {
    private var storage = sockaddr_storage()
    private var length: socklen_t = 0

    /// Resolves `host` (an IP literal or a name such as `localhost`) without DNS beyond /etc/hosts.
    static func resolve(host: String, port: UInt16) throws -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocketType
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw DaemonStartError(
                description: "cannot resolve host '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var address = SocketAddress()
        withUnsafeMutableBytes(of: &address.storage) { destination in
            destination.copyMemory(
                from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        address.length = first.pointee.ai_addrlen
        return address
    }

    /// Calls `body` with a `sockaddr` pointer to this address.
    mutating func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }

    /// Why binding this address fails, found by trying it (libmicrohttpd does not report errno).
    mutating func bindProblem() -> String {
        let family = Int32(storage.ss_family)
        let fd = socket(family, streamSocketType, 0)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let length = self.length
        let result = withSockaddr { bind(fd, $0, length) }
        if result != 0 {
            return errno == EADDRINUSE ? "the port is already in use" : String(cString: strerror(errno))
        }
        return "libmicrohttpd could not start (see its message above)"
    }
}

/// `SOCK_STREAM` as an `Int32`: an enum case in Glibc's headers, a plain macro in Darwin's.
#if canImport(Glibc)
private let streamSocketType = Int32(SOCK_STREAM.rawValue)
#else
private let streamSocketType = SOCK_STREAM
#endif
