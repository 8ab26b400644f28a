/// Socket, body and deadline settings of the HTTP transport, with every default defined here
/// once: the server's options embed them, and tests and fuzz targets start from the same values.
package struct TransportSettings: Sendable, Equatable {
    /// IP address or `localhost` to bind.
    package var host = "127.0.0.1"
    /// TCP port; 0 picks a free one.
    package var port: UInt16 = 8080
    /// Worker threads, each with its own epoll set (0: one per CPU core).
    package var threads = 0
    /// Idle connections are closed after this many seconds.
    package var connectionTimeoutSeconds = 30
    /// Most concurrent connections.
    package var maxConnections = 1024
    /// Per-connection memory for the request line and headers (larger heads get 431).
    package var connectionMemoryBytes = 16 << 10
    /// Largest accepted request body (413 beyond).
    package var maxBodyBytes = 256 << 20
    /// Most parts in a multipart body.
    package var maxParts = 128
    /// Most bytes of multipart parts kept in memory together (the payload); the rest stream to files.
    package var maxMemoryPartBytes = 16 << 20
    /// A request head must arrive within this many seconds of the connection's start or its
    /// previous answer (0: no deadline).
    package var headerTimeoutSeconds = 10
    /// After its first `headerTimeoutSeconds`, a body must arrive at least this fast (0: no minimum).
    package var minBodyBytesPerSecond = 1024
    /// Most connections from one IP address (0: no limit).
    package var maxConnectionsPerIP = 0
    /// Most body bytes (declared or received) of all requests in progress together; beyond, 503.
    package var maxInflightBytes = 1 << 30
    /// Most memory held by bodies kept in memory (whole bodies, multipart parts kept in memory) of
    /// all requests in progress together, each byte counted `memoryCostPerBodyByte` times as it
    /// arrives; beyond, 503. Never below what one body of the largest accepted size costs.
    package var maxMemoryBodyBytes = 64 << 20
    /// What a byte of a body kept in memory costs the memory budget as it arrives: the byte itself,
    /// the parsed form it becomes and the feed written from it, all alive before the request is
    /// answered (a text-heavy JSON publish of 16 MiB peaks at about 48 MiB). The application
    /// counts what value-dense JSON adds, before parsing it, against the same budget.
    package static let memoryCostPerBodyByte = 3

    /// What `bytes` of a body kept in memory cost the memory budget. The callers' sizes are a
    /// connection buffer's piece or at most `--max-payload-bytes` (2³²), so it cannot overflow.
    package static func memoryCost(ofBodyBytes bytes: Int) -> Int { bytes * memoryCostPerBodyByte }
    /// Whether a `304` states the representation's length (RFC 9110 §8.6) or `Content-Length: 0`.
    /// 0: OkHttp, Android's `HttpURLConnection` and wrk read a `304`'s length as body bytes to wait
    /// for, caches ignore it (RFC 9111 §3.2), and libmicrohttpd 0.9.75 always sends one (no flag of
    /// it leaves the header out while keeping the connection alive).
    package var notModifiedStatesLength = false
    /// Whether every request is logged to stderr.
    package var accessLog = true

    /// The defaults.
    package init() {}

    /// The memory budget in force: `maxMemoryBodyBytes`, raised when lower to what one body of
    /// `maxMemoryPartBytes` costs.
    package var effectiveMemoryBodyBytes: Int {
        let (largestBody, overflow) = maxMemoryPartBytes.multipliedReportingOverflow(by: Self.memoryCostPerBodyByte)
        return overflow ? .max : max(maxMemoryBodyBytes, largestBody)
    }
}
