import CMicroHTTPD

/// One open connection, made when libmicrohttpd accepts it and kept in its per-connection slot
/// until it closes: the state machine of its current request and what that request holds (its
/// body's sink, the request kept while parked, its suspension or deferred answer).
///
/// libmicrohttpd handles one request at a time per connection and calls the handler for a
/// connection from one thread at a time, so nothing here is locked. The request's state lives in
/// one allocation made with the connection and reached through computed properties: a read
/// allocates nothing, and no access pays for the dynamic exclusivity checks that stored class
/// properties get.
final class ConnectionState: @unchecked Sendable {
    /// The machine, with answers boxed so that its states stay a few words long.
    typealias Machine = RequestStateMachine<BoxedAnswer>

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

    /// Everything one request holds; replaced whole when it completes.
    private struct Request {
        var machine = Machine()
        var sink = Sink.none
        var buffer: [UInt8] = []
        var memoryHeld = 0
        var parked: HTTPRequest?
        var suspension: Suspension?
        var deferred: DeferredResponse?
        var logStartNanos: Int64 = 0
        var clientID: String?? = nil
        /// The request's method as libmicrohttpd holds it (valid until the completion callback
        /// returns), named only if the request ends unanswered.
        var method: UnsafePointer<CChar>?
    }

    /// The watchdog's entry for this connection (nil without deadlines).
    let watch: ConnectionWatchdog.Connection?
    private let request: UnsafeMutablePointer<Request>

    init(watch: ConnectionWatchdog.Connection?) {
        self.watch = watch
        request = .allocate(capacity: 1)
        request.initialize(to: Request())
    }

    deinit {
        request.deinitialize(count: 1)
        request.deallocate()
    }

    /// The current request's life.
    var machine: Machine {
        _read { yield request.pointee.machine }
        _modify { yield &request.pointee.machine }
    }

    /// Where its body goes.
    var sink: Sink {
        get { request.pointee.sink }
        set { request.pointee.sink = newValue }
    }

    /// The body when kept in memory.
    var buffer: [UInt8] {
        _read { yield request.pointee.buffer }
        _modify { yield &request.pointee.buffer }
    }

    /// Bytes of the daemon's memory budget this request holds (its buffer, its multipart parts in
    /// memory), given back when it completes.
    var memoryHeld: Int {
        get { request.pointee.memoryHeld }
        set { request.pointee.memoryHeld = newValue }
    }

    /// The request as first handled, kept while it is parked.
    var parked: HTTPRequest? {
        get { request.pointee.parked }
        set { request.pointee.parked = newValue }
    }

    /// Set while the request is parked, until it is asked again.
    var suspension: Suspension? {
        get { request.pointee.suspension }
        set { request.pointee.suspension = newValue }
    }

    /// Set while the request's answer is computed on the work pool.
    var deferred: DeferredResponse? {
        get { request.pointee.deferred }
        set { request.pointee.deferred = newValue }
    }

    /// The request's method, in libmicrohttpd's memory (valid until its completion).
    var method: UnsafePointer<CChar>? {
        get { request.pointee.method }
        set { request.pointee.method = newValue }
    }

    /// When the request began, for the access log (0 when the log is off).
    var logStartNanos: Int64 {
        get { request.pointee.logStartNanos }
        set { request.pointee.logStartNanos = newValue }
    }

    /// The client's `X-Request-Id` when it sent a sane one (echoed in the answer), looked up once.
    func clientRequestID(_ connection: OpaquePointer) -> String? {
        if let known = request.pointee.clientID { return known }
        let found = RequestID.sane(MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"))
        request.pointee.clientID = .some(found)
        return found
    }

    /// Moves the watchdog's view of the connection (no-op without deadlines).
    func watch(_ phase: ConnectionWatchdog.Phase) {
        watch?.phase.withLock { $0 = phase }
    }

    /// Forgets everything the finished request held (the machine is back at idle already). Field
    /// by field, and only what was set: a read sets none of them, and assigning a whole new
    /// `Request` would copy it on every read.
    func reset() {
        if case .none = request.pointee.sink {} else { request.pointee.sink = .none }
        if request.pointee.buffer.capacity > 0 { request.pointee.buffer = [] }
        request.pointee.memoryHeld = 0
        if request.pointee.parked != nil { request.pointee.parked = nil }
        if request.pointee.suspension != nil { request.pointee.suspension = nil }
        if request.pointee.deferred != nil { request.pointee.deferred = nil }
        if request.pointee.clientID != nil { request.pointee.clientID = nil }
        request.pointee.logStartNanos = 0
        request.pointee.method = nil
    }
}

/// An answer the state machine holds (decided before a body ended): one reference, so the
/// machine's states stay small and cheap to move.
final class BoxedAnswer: Sendable {
    /// The answer.
    let response: HTTPResponse

    init(_ response: HTTPResponse) { self.response = response }
}
