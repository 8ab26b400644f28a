import CMicroHTTPD

/// One open connection, made when libmicrohttpd accepts it and kept in its per-connection slot
/// until it closes: the state machine of its current request and what that request holds (its
/// body's sink, the request kept while parked, its suspension or deferred answer).
///
/// libmicrohttpd handles one request at a time per connection and calls the handler for a
/// connection from one thread at a time, so nothing here is locked; a read allocates nothing.
final class ConnectionState: @unchecked Sendable {
    /// Where a request's body goes.
    enum Sink {
        /// No body, or one being dropped.
        case none
        /// Kept in memory, in `buffer`.
        case buffer
        /// Streamed through libmicrohttpd's post processor into parts.
        case multipart(MultipartCollector)
        /// Streamed whole to a file.
        case spool(BodySpool)
    }

    /// The watchdog's entry for this connection (nil without deadlines).
    let watch: ConnectionWatchdog.Connection?
    /// The current request's life.
    var machine = RequestStateMachine<HTTPResponse>()
    /// Where its body goes.
    var sink = Sink.none
    /// The body when kept in memory.
    var buffer: [UInt8] = []
    /// The request as first handled, kept while it is parked.
    var parked: HTTPRequest?
    /// Set while the request is parked, until it is asked again.
    var suspension: Suspension?
    /// Set while the request's answer is computed on the work pool.
    var deferred: DeferredResponse?
    /// When the request began, for the access log (0 when the log is off).
    var logStartNanos: Int64 = 0
    private var clientID: String??

    init(watch: ConnectionWatchdog.Connection?) {
        self.watch = watch
    }

    /// The client's `X-Request-Id` when it sent a sane one (echoed in the answer), looked up once.
    func clientRequestID(_ connection: OpaquePointer) -> String? {
        if let clientID { return clientID }
        let found = RequestID.sane(MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"))
        clientID = .some(found)
        return found
    }

    /// Moves the watchdog's view of the connection (no-op without deadlines).
    func watch(_ phase: ConnectionWatchdog.Phase) {
        watch?.phase.withLock { $0 = phase }
    }

    /// Forgets everything the finished request held.
    func reset() {
        sink = .none
        buffer = []
        parked = nil
        suspension = nil
        deferred = nil
        logStartNanos = 0
        clientID = nil
    }
}
