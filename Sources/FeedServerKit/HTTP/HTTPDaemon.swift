import FeedStore
import CMicroHTTPD
import FeedStore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the daemon could not start.
struct DaemonStartError: Error, CustomStringConvertible {
    /// A sentence for the operator.
    let description: String
}

/// Socket and resource settings of the HTTP daemon.
struct DaemonSettings: Sendable {
    /// IP address or `localhost` to bind.
    var host: String = "127.0.0.1"
    /// TCP port; 0 picks a free one.
    var port: UInt16 = 8080
    /// Worker threads, each with its own epoll set.
    var threads: Int = 2
    /// Idle connections are closed after this many seconds.
    var connectionTimeoutSeconds: Int = 30
    /// Most concurrent connections.
    var maxConnections: Int = 1024
    /// Per-connection memory for the request line and headers (larger headers get 431).
    var connectionMemoryBytes: Int = 16 << 10
    /// Largest accepted request body (413 beyond).
    var maxBodyBytes: Int = 64 << 20
    /// Most parts in a multipart body.
    var maxParts: Int = 128
    /// Largest multipart part kept in memory (the payload).
    var maxPayloadBytes: Int = 16 << 20
    /// Where multipart asset parts are streamed to files (nil: kept in memory).
    var uploads: UploadArea?
    /// A request head must arrive within this many seconds of the connection's start or its
    /// previous answer (0: no deadline).
    var headerTimeoutSeconds: Int = 10
    /// After its first `headerTimeoutSeconds`, a body must arrive at least this fast (0: no minimum).
    var minBodyBytesPerSecond: Int = 1024
    /// Most connections from one IP address (0: no limit).
    var maxConnectionsPerIP: Int = 0
    /// Most body bytes (declared or received) of all requests in progress together; beyond, 503.
    var maxInflightBytes: Int = 1 << 30
    /// Whether a `304` states the representation's length (RFC 9110 §8.6) or `Content-Length: 0`.
    var notModifiedStatesLength = true
}

/// Owns the libmicrohttpd daemon (`MHD_start_daemon` … `MHD_stop_daemon`) and its C callbacks.
///
/// Retain graph: the daemon holds an unretained pointer to `context`, which this object keeps
/// alive until after `MHD_stop_daemon` returns. Each request's `PendingRequest` is retained in
/// libmicrohttpd's per-request slot on the first handler call and released by the completion callback.
final class HTTPDaemon: @unchecked Sendable {
    // The daemon pointer never changes after init; libmicrohttpd's own API is thread-safe for
    // stop/info, and `stopped` guards the one call that must happen once.
    private let daemon: OpaquePointer
    private let context: DaemonContext
    /// How each worker waits for its sockets: epoll on Linux; elsewhere poll(2), as
    /// libmicrohttpd 0.9 has no kqueue loop (a Darwin build, not built or tested here).
    #if os(Linux)
    private static let eventLoop = MHD_USE_EPOLL.rawValue
    #else
    private static let eventLoop = MHD_USE_POLL.rawValue
    #endif
    private let stopped = Lock(false)
    /// The port actually bound (differs from the setting when it was 0).
    let port: UInt16

    /// Starts listening; `handler` runs on libmicrohttpd's worker threads with the whole request,
    /// `admitBody` on the first call of a request that carries a body, with its head and declared
    /// length (nil: chunked), and may refuse it or lower its limit before the body is read;
    /// `preparedAnswers` is asked first for a bodyless request (cached reads); `countAnswer` is
    /// told of every answer sent that is not `isCounted` (method, status, body bytes).
    init(settings: DaemonSettings, log: AccessLog,
         admitBody: @escaping @Sendable (HTTPRequest, Int?) -> BodyAdmission = { _, _ in .accept(limit: nil) },
         preparedAnswers: PreparedAnswers? = nil,
         countAnswer: (@Sendable (String, Int, Int) -> Void)? = nil,
         handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws {
        let context = DaemonContext(handler: handler, admitBody: admitBody, preparedAnswers: preparedAnswers,
                                    countAnswer: countAnswer, settings: settings, log: log)
        var address = try SocketAddress.resolve(host: settings.host, port: settings.port)
        let started: OpaquePointer? = address.withSockaddr { sockaddr in
            var options = CMicroHTTPD_Settings(
                flags: UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | Self.eventLoop
                    | MHD_USE_ERROR_LOG.rawValue | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue
                    | MHD_ALLOW_SUSPEND_RESUME.rawValue),
                address: sockaddr,
                thread_pool_size: UInt32(max(1, settings.threads)),
                connection_timeout_seconds: UInt32(max(1, settings.connectionTimeoutSeconds)),
                connection_limit: UInt32(max(1, settings.maxConnections)),
                connection_memory_limit: settings.connectionMemoryBytes,
                listen_backlog: 1024,
                per_ip_connection_limit: UInt32(clamping: max(0, settings.maxConnectionsPerIP)),
                notify_connection: context.watchdog == nil ? nil : connectionNotified)
            return CMicroHTTPD_start_daemon(&options, accessHandler, requestCompleted, Unmanaged.passUnretained(context).toOpaque())
        }
        guard let started else {
            throw DaemonStartError(description: "cannot listen on \(settings.host):\(settings.port): \(address.bindProblem())")
        }
        self.daemon = started
        self.context = context
        context.watchdog?.start()
        self.port = CMicroHTTPD_bound_port(started)
    }

    /// Requests currently being handled (between first handler call and completion).
    var requestsInFlight: Int { context.inFlight.load(ordering: .relaxed) }

    /// Requests parked right now (long-poll waits).
    var suspendedRequests: Int { context.suspended.withLock { $0.count } }

    /// Wakes every parked request (before a shutdown: `MHD_stop_daemon` must not find any).
    func wakeAllSuspended() {
        for suspension in context.suspended.withLock({ Array($0.values) }) { suspension.wake() }
    }

    /// Answers 503 to every request still waiting for the work pool (at the shutdown deadline:
    /// `MHD_stop_daemon` must not find a suspended connection). Their jobs' answers are dropped.
    func abandonDeferred() {
        for deferred in context.deferred.withLock({ Array($0.values) }) { deferred.complete(shuttingDown()) }
    }

    /// Stops taking new requests: from now on a new request is answered `503` at once and every
    /// answer closes its connection, so nothing new holds the shutdown; requests already in
    /// progress are still served.
    ///
    /// Not `MHD_quiesce_daemon`: with epoll and worker threads it races libmicrohttpd's own
    /// event loop over removing the listening socket from the epoll sets, and the loser aborts
    /// the process ("Failed to remove listen FD from epoll set", an open defect of 0.9.75 that
    /// the thread sanitizer run hit at shutdown). The socket stays open until `MHD_stop_daemon`.
    func stopAccepting() {
        context.closing.store(true, ordering: .releasing)
    }

    /// Stops the daemon and its threads (`MHD_stop_daemon`); idempotent.
    func stop() {
        let alreadyStopped = stopped.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        guard !alreadyStopped else { return }
        context.watchdog?.stop()
        MHD_stop_daemon(daemon)
    }

    deinit { stop() }
}

/// `MHD_YES` / `MHD_NO` (imported as a closed Swift enum).
let mhdYes = MHD_Result(rawValue: 1)!
let mhdNo = MHD_Result(rawValue: 0)!

/// What the C callbacks reach through their `cls` pointer.
final class DaemonContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let admitBody: @Sendable (HTTPRequest, Int?) -> BodyAdmission
    let maxBodyBytes: Int
    let maxParts: Int
    /// Largest multipart part kept in memory (the payload).
    let maxPayloadBytes: Int
    /// Where multipart asset parts are streamed (nil: kept in memory).
    let uploads: UploadArea?
    let log: AccessLog
    let inFlight = Atomic<Int>(0)
    /// Set when shutdown begins: every answer from then on closes its connection, so a client
    /// that keeps pipelining requests cannot hold the shutdown until its deadline.
    let closing = Atomic<Bool>(false)
    /// Slow-client deadlines (nil when both are off).
    let watchdog: ConnectionWatchdog?
    /// Body bytes of requests in progress, against `maxInflightBytes`.
    let inflightBytes = Atomic<Int>(0)
    let maxInflightBytes: Int
    /// `DaemonSettings.notModifiedStatesLength`.
    let notModifiedStatesLength: Bool
    /// Parked requests by their `PendingRequest`, so a shutdown can resume every one.
    let suspended = Lock<[ObjectIdentifier: Suspension]>([:])
    /// Requests whose answer is computed on the work pool, so a shutdown can answer them.
    let deferred = Lock<[ObjectIdentifier: DeferredResponse]>([:])
    /// Cached reads answered before the request model is built (nil: none).
    let preparedAnswers: PreparedAnswers?
    /// Counts an answer the handler did not count (method, status, body bytes).
    let countAnswer: (@Sendable (String, Int, Int) -> Void)?

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, admitBody: @escaping @Sendable (HTTPRequest, Int?) -> BodyAdmission,
         preparedAnswers: PreparedAnswers?, countAnswer: (@Sendable (String, Int, Int) -> Void)?, settings: DaemonSettings, log: AccessLog) {
        self.handler = handler
        self.preparedAnswers = preparedAnswers
        self.countAnswer = countAnswer
        self.admitBody = admitBody
        maxBodyBytes = settings.maxBodyBytes
        maxParts = settings.maxParts
        maxPayloadBytes = settings.maxPayloadBytes
        uploads = settings.uploads
        maxInflightBytes = settings.maxInflightBytes
        notModifiedStatesLength = settings.notModifiedStatesLength
        watchdog = settings.headerTimeoutSeconds > 0
            ? ConnectionWatchdog(headerTimeoutSeconds: settings.headerTimeoutSeconds, minBodyBytesPerSecond: settings.minBodyBytesPerSecond)
            : nil
        self.log = log
    }
}

/// One request in progress. libmicrohttpd calls the handler for a connection from one thread at a time.
final class PendingRequest: @unchecked Sendable {
    /// When the request began: precise when the access log prints durations, else as of the last
    /// timer tick (the watchdog's and the drain's deadlines are seconds long).
    let startNanos: Int64

    init(preciseStart: Bool) {
        startNanos = preciseStart ? MonotonicClock.nanos() : MonotonicClock.coarseNanos()
    }

    var body: [UInt8] = []
    var bodyBytes = 0
    /// Whether the request carries a body: its watchdog phase moves from receiving to answering
    /// when the body has ended (a bodyless request is answering from its first call).
    var receivedBody = false
    /// Set when the route takes no body here (`BodyAdmission.discard`): what arrives is read and
    /// dropped within `BodyDrain`'s bounds, and the request is answered as if it had none.
    var discardsBody = false
    /// The most body bytes this request may send (the route's limit, or the daemon's).
    var bodyLimit = Int.max
    /// The connection's watchdog entry (nil without deadlines).
    var connection: ConnectionWatchdog.Connection?
    /// Body bytes counted against the daemon's in-flight limit, given back when the request ends.
    var inflightBytes = 0
    /// An answer decided before the body ended (413 so far): the body bytes that still arrive
    /// are read and dropped, within `BodyDrain`'s bounds, and this is queued when it ends.
    var earlyAnswer: HTTPResponse?
    /// Body bytes dropped since `earlyAnswer` was decided.
    var drainedBytes = 0
    /// Set for `multipart/form-data` bodies, which stream into parts instead of `body`.
    var multipart: MultipartCollector?
    /// Set for bodies streamed whole to a file (`BodySpool.mediaTypes`) instead of `body`.
    var spool: BodySpool?
    /// Set while the request is parked, and after it was woken.
    var suspension: Suspension?
    /// Set while the request's answer is computed on the work pool.
    var deferred: DeferredResponse?
    /// Set when the socket was corked for this request's answer (a file): uncorked on completion.
    var corked = false
    private var clientID: String??
    /// The request as first handled, kept while it is parked.
    var request: HTTPRequest?

    /// The client's `X-Request-Id` when it sent a sane one (echoed in the answer), looked up once.
    func clientRequestID(_ connection: OpaquePointer) -> String? {
        if let clientID { return clientID }
        let found = RequestID.sane(MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"))
        clientID = .some(found)
        return found
    }
}

// The access handler: first call creates the request state (no response yet, so keep-alive works),
// middle calls collect body bytes, the last call (no more upload data) routes and queues the response.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, slot in
    guard let cls, let connection, let url, let method, let uploadSize, let slot else { return mhdNo }
    let context = Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    guard let existing = slot.pointee else {
        return firstCall(connection, context, slot, method: method, url: url)
    }
    let pending: PendingRequest
    if existing == bodylessRequestSlot {
        if uploadSize.pointee == 0, let answer = preparedAnswer(connection, context, method: method, url: url, startNanos: nil) {
            if answer.corked { slot.pointee = corkedBodylessRequestSlot }
            return answer.queued
        }
        // Declined: the request goes the usual way, with its state made now.
        pending = PendingRequest(preciseStart: false)
        pending.connection = watchedConnection(connection)
        slot.pointee = Unmanaged.passRetained(pending).toOpaque()
    } else {
        pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()
    }
    let size = uploadSize.pointee
    if size > 0 {
        pending.connection?.phase.withLock { phase in
            phase = phase.adding(size)
        }
    }
    if size > 0, let answer = pending.earlyAnswer ?? (pending.discardsBody ? bodyNotTaken() : nil) {
        // Dropped: a refused body, or one sent where none is taken (answered as usual at its end).
        uploadSize.pointee = 0
        pending.drainedBytes = pending.drainedBytes.addingSaturating(size)
        guard BodyDrain.allows(bytes: pending.drainedBytes, since: pending.startNanos) else {
            // Past the drain bounds: answer now; libmicrohttpd closes the connection after it.
            return respond(connection, context, pending, method: method, url: url, answer)
        }
        return mhdYes
    }
    if size > 0 {
        pending.bodyBytes = pending.bodyBytes.addingSaturating(size)
        if pending.bodyBytes > pending.inflightBytes, let busy = reserveInflight(context, pending, declaredLength: pending.bodyBytes) {
            // A chunked body took the server past its in-flight limit.
            pending.earlyAnswer = busy
            pending.body = []
            pending.multipart = nil
            pending.spool = nil
        } else if pending.bodyBytes > min(pending.bodyLimit, context.maxBodyBytes) {
            pending.earlyAnswer = tooLarge(min(pending.bodyLimit, context.maxBodyBytes))
            pending.body = []
            pending.multipart = nil
            pending.spool = nil
        } else if let data = uploadData {
            if let multipart = pending.multipart {
                multipart.feed(data, count: size)
            } else if let spool = pending.spool {
                spool.feed(data, count: size)
            } else {
                pending.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
            }
        }
        uploadSize.pointee = 0
        return mhdYes
    }
    if pending.receivedBody {
        pending.connection?.phase.withLock { $0 = .answering }
    }
    if let answer = pending.earlyAnswer {
        return respond(connection, context, pending, method: method, url: url, answer)
    }
    if let deferred = pending.deferred {
        // Resumed because the work pool (or a shutdown) set the answer.
        context.deferred.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(pending)) }
        pending.deferred = nil
        return respond(connection, context, pending, method: method, url: url, deferred.response ?? shuttingDown())
    }
    if pending.suspension != nil, var request = pending.request {
        // Woken from a wait: ask the handler again, which now answers.
        context.suspended.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(pending)) }
        request.resumed = true
        request.query = RequestFields(connection: connection, kind: .GET_ARGUMENT_KIND)
        request.headers = RequestFields(connection: connection, kind: .HEADER_KIND)
        return respond(connection, context, pending, method: method, url: url, context.handler(request))
    }
    if pending.bodyBytes == 0, pending.multipart == nil, pending.spool == nil,
       let answer = preparedAnswer(connection, context, method: method, url: url, startNanos: pending.startNanos) {
        pending.corked = answer.corked
        return answer.queued
    }
    var parts: [MultipartPart]?
    var bodyFile: UploadedFile?
    let uploads = pending.multipart?.folder ?? pending.spool?.folder
    if pending.bodyBytes == 0, pending.multipart == nil, !pending.discardsBody, isMultipart(connection) {
        parts = []  // an empty multipart body: no parts
    }
    if let spool = pending.spool {
        switch spool.finish() {
        case .failure(let problem): return respond(connection, context, pending, method: method, url: url, problem.response)
        case .success(let file): bodyFile = file
        }
    }
    if let multipart = pending.multipart {
        switch multipart.finish() {
        case .failure(let problem): return respond(connection, context, pending, method: method, url: url, problem.response)
        case .success(let collected): parts = collected
        }
    }
    let request = HTTPRequest(
        method: String(cString: method), rawPath: String(cString: url),
        query: RequestFields(connection: connection, kind: .GET_ARGUMENT_KIND),
        headers: RequestFields(connection: connection, kind: .HEADER_KIND), body: pending.body,
        parts: parts, uploads: uploads, bodyFile: bodyFile)
    pending.body = []
    pending.multipart = nil
    pending.spool = nil
    let response = context.handler(request)
    if case .deferred(let deferred) = response.body {
        pending.deferred = deferred
        context.deferred.withLock { $0[ObjectIdentifier(pending)] = deferred }
        MHD_suspend_connection(connection)
        let resumable = ConnectionHandle(connection)
        deferred.suspension.suspended { MHD_resume_connection(resumable.pointer) }
        return mhdYes
    }
    if case .suspend(let suspension) = response.body {
        pending.suspension = suspension
        pending.request = request
        context.suspended.withLock { $0[ObjectIdentifier(pending)] = suspension }
        MHD_suspend_connection(connection)
        let resumable = ConnectionHandle(connection)
        suspension.suspended { MHD_resume_connection(resumable.pointer) }
        return mhdYes
    }
    return respond(connection, context, pending, method: method, url: url, response)
}

/// The handler's first call for a request: its head has arrived. A bodyless request keeps no
/// state (`bodylessRequestSlot`) unless the access log needs its start time; any other gets its
/// `PendingRequest`, and its body is judged from the head: refused, dropped, or read into a
/// buffer, a file or multipart parts.
private func firstCall(_ connection: OpaquePointer, _ context: DaemonContext, _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                       method: UnsafePointer<CChar>, url: UnsafePointer<CChar>) -> MHD_Result {
    context.inFlight.add(1, ordering: .relaxed)
    var head = CMicroHTTPD_RequestHead()
    CMicroHTTPD_read_head(connection, &head)
    let framing = Framing(head)
    let length = framing.declaredLength
    let carriesBody = framing.carriesBody
    if !carriesBody, framing.isPlain, !context.log.isEnabled, !context.closing.load(ordering: .acquiring) {
        // The common case, a read: nothing to keep until its answer on the next call.
        watchedConnection(connection)?.phase.withLock { $0 = .answering }
        slot.pointee = bodylessRequestSlot
        return mhdYes
    }
    let pending = PendingRequest(preciseStart: context.log.isEnabled)
    slot.pointee = Unmanaged.passRetained(pending).toOpaque()
    pending.connection = watchedConnection(connection)
    pending.receivedBody = carriesBody
    let now = pending.startNanos
    pending.connection?.phase.withLock { $0 = carriesBody ? .receivingBody(since: now) : .answering }
    if context.closing.load(ordering: .acquiring) {
        // Shutting down: a new request is not started (it would hold the shutdown).
        return respond(connection, context, pending, method: method, url: url, notStarted())
    }
    if let answer = ambiguousFraming(framing.conflict) ?? framing.unsupportedCoding {
        // Where this body ends is not known, so it can be neither read nor drained: answer
        // and close (an answer queued on the first call closes the connection).
        return respond(connection, context, pending, method: method, url: url, answer)
    }
    // No body (the common case: reads): answered on its next call. An empty multipart body
    // gets its empty parts there, without a post processor (which refuses some boundaries
    // a bodyless DELETE may well carry).
    guard carriesBody else { return mhdYes }
    if let answer = refusalBeforeBody(connection, context, pending, method: method, url: url, declaredLength: length)
        ?? (pending.discardsBody ? discardTooLarge(length) : reserveInflight(context, pending, declaredLength: length)) {
        // A client waiting for `100 Continue` has sent no body yet: answering now makes
        // libmicrohttpd skip the `100` and close afterwards, so nothing is uploaded in vain.
        // So does a body too large to drain. Any other client is sending its body before it
        // reads: read and drop it, then answer, or it would see a reset instead of the answer.
        if expectsContinue(connection) || (length ?? 0) > BodyDrain.maxBytes {
            return respond(connection, context, pending, method: method, url: url, answer)
        }
        pending.earlyAnswer = answer
        return mhdYes
    }
    if pending.discardsBody { return mhdYes }
    if isMultipart(connection) {
        pending.multipart = MultipartCollector(connection: connection, maxParts: context.maxParts,
                                               maxMemoryPartBytes: context.maxPayloadBytes, makeFolder: context.uploads.map { area in { try area.makeFolder() } })
    } else if let area = context.uploads, let type = mediaType(connection), BodySpool.mediaTypes.contains(type) {
        do {
            pending.spool = try BodySpool(area: area)
        } catch {
            pending.earlyAnswer = BodySpool.storageProblem(error).response
        }
    }
    return mhdYes
}

/// The per-request slot of a bodyless request between its two handler calls: a marker, not an
/// object (a read costs no allocation); it becomes a `PendingRequest` if the read is not answered
/// from a prepared response. libmicrohttpd never dereferences the slot.
private var bodylessRequestSlot: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

/// The same after its answer corked the socket (`CMicroHTTPD_set_cork`): uncorked on completion.
private var corkedBodylessRequestSlot: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 2)! }

/// The watchdog's entry for `connection` (nil without deadlines).
private func watchedConnection(_ connection: OpaquePointer) -> ConnectionWatchdog.Connection? {
    CMicroHTTPD_connection_context(connection).map { Unmanaged<ConnectionWatchdog.Connection>.fromOpaque($0).takeUnretainedValue() }
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, slot, _ in
    guard let cls, let slot, let existing = slot.pointee else { return }
    let context = Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    if existing == bodylessRequestSlot || existing == corkedBodylessRequestSlot {
        // A keep-alive connection now waits for its next request head (a deadline in seconds).
        if let connection {
            if existing == corkedBodylessRequestSlot { _ = CMicroHTTPD_set_cork(connection, 0) }
            let now = MonotonicClock.coarseNanos()
            watchedConnection(connection)?.phase.withLock { $0 = .awaitingHead(sinceNanos: now) }
        }
        slot.pointee = nil
        context.inFlight.subtract(1, ordering: .relaxed)
        return
    }
    // A client that went away while parked ends here without another handler call.
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing)
    let finished = pending.takeUnretainedValue()
    if finished.corked, let connection { _ = CMicroHTTPD_set_cork(connection, 0) }
    context.inflightBytes.subtract(finished.inflightBytes, ordering: .relaxed)
    // A keep-alive connection now waits for its next request head (a deadline in seconds).
    let now = MonotonicClock.coarseNanos()
    finished.connection?.phase.withLock { $0 = .awaitingHead(sinceNanos: now) }
    // Only a request that was parked or offloaded is in these tables (set together with the
    // field; `deferred` is cleared only once it is out of the table again).
    if finished.suspension != nil {
        context.suspended.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(finished)) }
    }
    if finished.deferred != nil {
        context.deferred.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(finished)) }
    }
    pending.release()
    slot.pointee = nil
    context.inFlight.subtract(1, ordering: .relaxed)
}

/// The answer for a request with a body that is refused from its head (nil: read the body). Only
/// requests that carry a body are judged here: a bodyless one is answered on its next call, as
/// usual, which keeps its connection alive.
private func refusalBeforeBody(_ connection: OpaquePointer, _ context: DaemonContext, _ pending: PendingRequest,
                               method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, declaredLength: Int?) -> HTTPResponse? {
    let head = HTTPRequest(
        method: String(cString: method), rawPath: String(cString: url),
        query: RequestFields(connection: connection, kind: .GET_ARGUMENT_KIND),
        headers: RequestFields(connection: connection, kind: .HEADER_KIND), body: [], parts: nil)
    switch context.admitBody(head, declaredLength) {
    case .refuse(let refusal):
        return refusal
    case .accept(let limit):
        pending.bodyLimit = min(limit ?? context.maxBodyBytes, context.maxBodyBytes)
        if let length = declaredLength, length > pending.bodyLimit { return tooLarge(pending.bodyLimit) }
        return nil
    case .discard:
        pending.discardsBody = true
        return nil
    }
}

private func notStarted() -> HTTPResponse {
    Problem(status: 503, type: "shutting-down", title: "Shutting down",
            detail: "The server is shutting down and did not start this request; nothing was done. Retry once it is back.",
            headers: [("Retry-After", "1")]).response
}

private func shuttingDown() -> HTTPResponse {
    Problem(status: 503, type: "shutting-down", title: "Shutting down",
            detail: "The server stopped before this request finished; it may or may not have taken effect. Retry once it is back.",
            headers: [("Retry-After", "1")]).response
}

/// For a body sent where none is taken that goes past what is read and dropped (`BodyDrain`).
private func bodyNotTaken() -> HTTPResponse {
    Problem(status: 413, type: "body-too-large", title: "Request body too large",
            detail: "This request takes no body; at most \(BodyDrain.maxBytes) bytes of one are read and dropped, within \(BodyDrain.maxNanos / 1_000_000_000) s.").response
}

private func tooLarge(_ limit: Int) -> HTTPResponse {
    Problem(status: 413, type: "body-too-large", title: "Request body too large",
            detail: "The request body exceeds this request's limit of \(limit) bytes (--max-body-bytes; --max-payload-bytes for a JSON payload).").response
}

/// Tracks connections for the watchdog: registered on accept (the entry rides in libmicrohttpd's
/// per-connection slot), dropped before libmicrohttpd closes the socket.
private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, slot, code in
    guard let cls, let connection, let slot else { return }
    let context = Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    guard let watchdog = context.watchdog else { return }
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let entry = watchdog.opened(fd: CMicroHTTPD_connection_fd(connection))
        slot.pointee = Unmanaged.passRetained(entry).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        guard let raw = slot.pointee else { return }
        let entry = Unmanaged<ConnectionWatchdog.Connection>.fromOpaque(raw)
        watchdog.closed(entry.takeUnretainedValue())
        entry.release()
        slot.pointee = nil
    default:
        break
    }
}

/// A request's framing fields, as `CMicroHTTPD_read_head` found them.
private struct Framing {
    let contentLength: UnsafePointer<CChar>?
    let transferEncoding: UnsafePointer<CChar>?
    /// How many `Transfer-Encoding` fields the request has.
    let codingFields: Int
    /// Whether the framing fields conflict (`CMicroHTTPD_FRAMING_CLEAR`: they do not).
    let conflict: CMicroHTTPD_Framing

    init(_ head: CMicroHTTPD_RequestHead) {
        contentLength = head.content_length
        transferEncoding = head.transfer_encoding
        codingFields = Int(head.transfer_encodings)
        conflict = head.framing
    }

    /// No conflict and no `Transfer-Encoding`: nothing about the framing needs an answer of its own.
    var isPlain: Bool { conflict == CMicroHTTPD_FRAMING_CLEAR && transferEncoding == nil }

    /// The declared `Content-Length`, nil when absent or not a number. libmicrohttpd takes any
    /// 64-bit length: one beyond `Int.max` reads as `Int.max`, more than every limit (read as
    /// nil it once skipped every check made from the head).
    var declaredLength: Int? {
        guard let contentLength else { return nil }
        let text = String(cString: contentLength).trimmingSpaces()
        return Int(text) ?? UInt64(text).map { Int(clamping: $0) }
    }

    /// The `501` for a transfer coding other than `chunked` alone (RFC 9112 §6.1): libmicrohttpd
    /// would wait for a body it cannot delimit, holding the connection until the client gives up.
    ///
    /// Repeated `Transfer-Encoding` fields are one list (RFC 9110 §5.3): `chunked` on one line and
    /// `gzip` on the next is `chunked, gzip`, never `chunked` alone (libmicrohttpd reads only the
    /// first line, and would frame the body as chunked where a proxy may not).
    ///
    /// `chunked` is matched as libmicrohttpd matches it, the whole value without trimming: it reads
    /// `chunked ` (a trailing space) as no coding at all and would wait for the connection's end,
    /// where a proxy trims it and frames the body as chunked (hostile review).
    var unsupportedCoding: HTTPResponse? {
        guard let transferEncoding else { return nil }
        var coding = String(cString: transferEncoding).lowercased()
        if codingFields > 1 { coding += " (and \(codingFields - 1) more Transfer-Encoding field\(codingFields > 2 ? "s" : ""))" }
        guard coding != "chunked" else { return nil }
        return Problem(status: 501, type: "unsupported-transfer-coding", title: "Unsupported transfer coding",
                       detail: "Transfer-Encoding '\(String(coding.prefix(100)))' is not supported: send the body with a Content-Length, or chunked alone.",
                       headers: [("Connection", "close")]).response
    }

    /// Whether the request carries a body: a positive `Content-Length`, or chunked.
    var carriesBody: Bool {
        if let declaredLength { return declaredLength > 0 }
        return transferEncoding.map { String(cString: $0).lowercased().contains("chunked") } ?? false
    }
}

/// Counts `total` body bytes of this request against the server's in-flight limit (what it has
/// counted before is already in); the 503 to answer when they do not fit, nil when they do.
private func reserveInflight(_ context: DaemonContext, _ pending: PendingRequest, declaredLength total: Int?) -> HTTPResponse? {
    guard let total, total > pending.inflightBytes else { return nil }
    let more = total - pending.inflightBytes
    guard more <= context.maxInflightBytes else { return inflightBusy(context) }  // could never fit (and the add below must not wrap)
    let after = context.inflightBytes.add(more, ordering: .relaxed).newValue
    guard after <= context.maxInflightBytes else {
        context.inflightBytes.subtract(more, ordering: .relaxed)
        return inflightBusy(context)
    }
    pending.inflightBytes = total
    return nil
}

/// The 503 for a body that does not fit under `--max-inflight-bytes` now.
private func inflightBusy(_ context: DaemonContext) -> HTTPResponse {
    Problem(status: 503, type: "busy", title: "Server busy",
            detail: "Other uploads in progress hold the server's limit of \(context.maxInflightBytes) body bytes in flight (--max-inflight-bytes); try again in a moment.",
            headers: [("Retry-After", "2")]).response
}

/// How much of a rejected request's body is read and dropped so that its client, if it sends
/// everything before reading, still reads the answer: at most `maxBytes` and `maxNanos`.
enum BodyDrain {
    /// Most body bytes dropped for one rejected request.
    static let maxBytes = 64 << 20
    /// Longest time from the request's start to the end of the drain.
    static let maxNanos: Int64 = 10_000_000_000

    /// Whether draining may go on after `bytes` were dropped for a request started at `startNanos`.
    static func allows(bytes: Int, since startNanos: Int64) -> Bool {
        bytes <= maxBytes && MonotonicClock.nanos() - startNanos <= maxNanos
    }
}

private func expectsContinue(_ connection: OpaquePointer) -> Bool {
    guard let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "Expect") else { return false }
    return String(cString: value).lowercased() == "100-continue"
}

extension Int {
    /// `self + other`, stopping at `Int.max` (byte counts from a client must not trap).
    func addingSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}

/// The request's `Content-Type` without parameters, lowercased.
private func mediaType(_ connection: OpaquePointer) -> String? {
    guard let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Type") else { return nil }
    let text = String(cString: value)
    return (text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "").trimmingSpaces().lowercased()
}

/// The answer for a body the route does not take that is declared longer than what is read and
/// dropped: given from the head (no `100 Continue`, nothing uploaded in vain).
private func discardTooLarge(_ declaredLength: Int?) -> HTTPResponse? {
    guard let declaredLength, declaredLength > BodyDrain.maxBytes else { return nil }
    return bodyNotTaken()
}

private func isMultipart(_ connection: OpaquePointer) -> Bool {
    guard let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Type") else { return false }
    return String(cString: value).lowercased().hasPrefix("multipart/form-data")
}

/// A request whose body length is ambiguous (RFC 9112 §6.3): `Content-Length` twice with
/// different values, or beside `Transfer-Encoding`, or either folded onto a second line.
/// libmicrohttpd 0.9.75 takes the first `Content-Length` it sees and does not recognise a folded
/// field; a proxy in front may do otherwise: the bytes after the body would be read as a
/// different request by each (request smuggling). Refused with a 400 that closes. Looked at on
/// every request, since a folded `Transfer-Encoding` alone hides a body from libmicrohttpd.
private func ambiguousFraming(_ conflict: CMicroHTTPD_Framing) -> HTTPResponse? {
    let problem: String
    switch conflict {
    case CMicroHTTPD_FRAMING_DIFFERENT_LENGTHS: problem = "Content-Length is given more than once with different values"
    case CMicroHTTPD_FRAMING_LENGTH_AND_CODING: problem = "Content-Length and Transfer-Encoding are both given"
    case CMicroHTTPD_FRAMING_FOLDED: problem = "A header field is folded onto a second line (obsolete line folding, RFC 9112 §5.2), or its name starts with Content-Length or Transfer-Encoding"
    default: return nil
    }
    return Problem(status: 400, type: "ambiguous-message-length", title: "Ambiguous message length",
                   detail: "\(problem), so where the body ends is ambiguous (RFC 9112 §6.3). Send one Content-Length, or chunked alone.",
                   headers: [("Connection", "close")]).response
}

/// A cached read answered by `DaemonContext.preparedAnswers` without building the request
/// model (nil: it declined, or the answer needs a header of its own for this request).
/// `startNanos`: when the request began, for the access log (nil when the log is off).
private func preparedAnswer(_ connection: OpaquePointer, _ context: DaemonContext,
                            method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, startNanos: Int64?) -> (queued: MHD_Result, corked: Bool)? {
    guard let answers = context.preparedAnswers, !context.closing.load(ordering: .acquiring) else { return nil }
    // Read again (the first call's pass): a bodyless request keeps nothing between its calls,
    // and one pass over a few fields costs less than the state that would keep it.
    var fields = CMicroHTTPD_RequestHead()
    CMicroHTTPD_read_head(connection, &fields)
    // A client's X-Request-Id is echoed in the answer: built per request, by the pipeline.
    guard RequestID.sane(fields.request_id) == nil else { return nil }
    let head = RequestHead(method: method, path: url, ifNoneMatch: fields.if_none_match, hasQuery: fields.has_query != 0)
    guard let answer = answers(head) else { return nil }
    let corked = corkForFile(connection, answer.sendsFile)
    // libmicrohttpd takes its own reference while queueing; until then the owner keeps it alive.
    let queued = withExtendedLifetime(answer.owner) { MHD_queue_response(connection, UInt32(answer.status), answer.handle) }
    if context.log.isEnabled, let startNanos {
        context.log.record(method: method, path: url, status: answer.status, bytes: answer.bodyBytes,
                           elapsedNanos: MonotonicClock.nanos() - startNanos, clientRequestID: nil)
    }
    return (queued, corked)
}

/// Corks the socket for an answer that sends a file (`CMicroHTTPD_set_cork`), so its header leaves
/// with the file's first bytes; whether it did (the completion callback then uncorks).
private func corkForFile(_ connection: OpaquePointer, _ sendsFile: Bool) -> Bool {
    sendsFile && CMicroHTTPD_set_cork(connection, 1) != 0
}

private func respond(_ connection: OpaquePointer, _ context: DaemonContext, _ pending: PendingRequest,
                     method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, _ response: HTTPResponse) -> MHD_Result {
    let clientID = pending.clientRequestID(connection)
    if !response.isCounted { context.countAnswer?(String(cString: method), response.status, response.bodyByteCount) }
    if case .stream(let stream) = response.body { stream.attach(connection) }
    pending.corked = corkForFile(connection, response.sendsFile && strcmp(method, "HEAD") != 0)
    let queued: MHD_Result
    let closing = context.closing.load(ordering: .acquiring)
    if clientID == nil, !closing, let prepared = response.prepared?.handle(for: response, statesLength: context.notModifiedStatesLength) {
        // The same answer for every request (a cached read): no allocation at all.
        queued = MHD_queue_response(connection, UInt32(response.status), prepared)
    } else {
        var extraHeaders = clientID.map { [("X-Request-Id", $0)] } ?? []
        if closing { extraHeaders.append(("Connection", "close")) }
        guard let built = MHDResponse(response, extraHeaders: extraHeaders, statesLength: context.notModifiedStatesLength) else { return mhdNo }
        queued = MHD_queue_response(connection, UInt32(response.status), built.handle)
    }
    if context.log.isEnabled {
        context.log.record(method: method, path: url, status: response.status, bytes: response.bodyByteCount,
                           elapsedNanos: MonotonicClock.nanos() - pending.startNanos, clientRequestID: clientID)
    }
    return queued
}
