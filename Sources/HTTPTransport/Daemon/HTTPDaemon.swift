import CMicroHTTPD
import ConcurrencyPrimitives
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the daemon could not start.
package struct DaemonStartError: Error, CustomStringConvertible {
    /// A sentence for the operator.
    package let description: String
}

/// Owns the libmicrohttpd daemon (`MHD_start_daemon` … `MHD_stop_daemon`).
///
/// Retain graph: the daemon holds an unretained pointer to `context`, which this object keeps
/// alive until after `MHD_stop_daemon` returns. Each connection's `ConnectionState` is retained
/// in libmicrohttpd's per-connection slot from accept to close (`DaemonCallbacks`); a request's
/// slot holds an unretained pointer to it while the request runs.
package final class HTTPDaemon: Sendable {
    // The daemon pointer never changes after init; libmicrohttpd's own API is thread-safe for
    // stop and info, and `stopped` guards the one call that must happen once.
    private nonisolated(unsafe) let daemon: OpaquePointer
    private let context: DaemonContext
    /// How each worker waits for its sockets: epoll on Linux; elsewhere poll(2), as
    /// libmicrohttpd 0.9 has no kqueue loop (a Darwin build, not built or tested here).
    #if os(Linux)
    private static let eventLoop = MHD_USE_EPOLL.rawValue
    #else
    private static let eventLoop = MHD_USE_POLL.rawValue
    #endif
    private let stopped = Atomic<Bool>(false)
    /// The port actually bound (differs from the setting when it was 0).
    package let port: UInt16

    /// Starts listening; `responder` answers on libmicrohttpd's threads, and bodies that are
    /// streamed to disk go to `uploads` (nil: kept in memory). Bodies kept in memory count against
    /// `memoryBudget`, shared with the application (nil: one of `effectiveMemoryBodyBytes`).
    package init(
        settings: TransportSettings, uploads: (any UploadStorage)?, responder: any HTTPResponder,
        memoryBudget: InflightBudget? = nil
    ) throws {
        let threads = settings.threads > 0 ? settings.threads : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let watchdog =
            settings.headerTimeoutSeconds > 0
            ? ConnectionWatchdog(
                headerTimeoutSeconds: settings.headerTimeoutSeconds,
                minBodyBytesPerSecond: settings.minBodyBytesPerSecond)
            : nil
        let context = DaemonContext(
            settings: settings, uploads: uploads, responder: responder, watchdog: watchdog,
            memoryBudget: memoryBudget ?? InflightBudget(limit: settings.effectiveMemoryBodyBytes))
        var address = try SocketAddress.resolve(host: settings.host, port: settings.port)
        // Started before the daemon: a thread that cannot start leaves no daemon to stop (after
        // init sets every stored property, a throw would run deinit, which stops it once more).
        do {
            try watchdog?.start()
        } catch {
            throw DaemonStartError(description: "cannot start the connection watchdog: \(error)")
        }
        let started: OpaquePointer? = address.withSockaddr { sockaddr in
            var options = CMicroHTTPD_Settings(
                flags: UInt32(
                    MHD_USE_INTERNAL_POLLING_THREAD.rawValue | Self.eventLoop | MHD_USE_ERROR_LOG.rawValue
                        | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue),
                address: sockaddr,
                thread_pool_size: UInt32(clamping: threads),
                connection_timeout_seconds: UInt32(clamping: max(1, settings.connectionTimeoutSeconds)),
                connection_limit: UInt32(clamping: max(1, settings.maxConnections)),
                connection_memory_limit: settings.connectionMemoryBytes,
                listen_backlog: 1024,
                per_ip_connection_limit: UInt32(clamping: max(0, settings.maxConnectionsPerIP)),
                notify_connection: DaemonCallbacks.connectionNotified)
            // Its threads answer reads from memory in microseconds: with short slices, one that
            // wakes takes a core from image work at once.
            return ThreadPriority.startingThreadsWithShortSlices {
                CMicroHTTPD_start_daemon(
                    &options, DaemonCallbacks.accessHandler, DaemonCallbacks.requestCompleted,
                    Unmanaged.passUnretained(context).toOpaque())
            }
        }
        guard let started else {
            watchdog?.stop()
            throw DaemonStartError(
                description: "cannot listen on \(settings.host):\(settings.port): \(address.bindProblem())")
        }
        self.daemon = started
        self.context = context
        self.port = CMicroHTTPD_bound_port(started)
    }

    /// Requests currently being handled (between first handler call and completion).
    package var requestsInFlight: Int { context.inFlight.load(ordering: .relaxed) }

    /// Requests parked right now (long-poll waits).
    package var suspendedRequests: Int { context.suspended.withLock { $0.count } }

    /// Connections the watchdog cut for being too slow.
    package var connectionsCut: Int { context.watchdog?.cut.load(ordering: .relaxed) ?? 0 }

    /// Body bytes of requests in progress, counted against `maxInflightBytes`.
    package var inflightBytes: Int { context.budget.inUse }

    /// Wakes every parked request (before a shutdown: `MHD_stop_daemon` must not find any).
    package func wakeAllSuspended() {
        for suspension in context.suspended.withLock({ Array($0.values) }) { suspension.wake() }
    }

    /// Answers 503 to every request still waiting for the work pool (at the shutdown deadline:
    /// `MHD_stop_daemon` must not find a suspended connection). Their jobs' answers are dropped.
    package func abandonDeferred() {
        for waiting in context.deferred.withLock({ Array($0.values) }) {
            let refusal = context.responder.respond(
                to: .shuttingDown(started: true), method: waiting.method, origin: nil)
            waiting.answer.complete(refusal)
        }
    }

    /// Stops taking new requests: from now on a new request is answered `503` at once and every
    /// answer closes its connection, so nothing new holds the shutdown; requests already in
    /// progress are still served.
    ///
    /// Not `MHD_quiesce_daemon`: with epoll and worker threads it races libmicrohttpd's own
    /// event loop over removing the listening socket from the epoll sets, and the loser aborts
    /// the process ("Failed to remove listen FD from epoll set", an open defect of 0.9.75,
    /// reachable at shutdown under ThreadSanitizer's timing). The socket stays open until
    /// `MHD_stop_daemon`.
    package func stopAccepting() {
        context.closing.store(true, ordering: .releasing)
    }

    /// Stops the daemon and its threads (`MHD_stop_daemon`); idempotent.
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        context.watchdog?.stop()
        MHD_stop_daemon(daemon)
    }

    deinit { stop() }
}

/// `MHD_YES` / `MHD_NO` (imported as a closed Swift enum).
let mhdYes = MHD_Result(rawValue: 1)!
let mhdNo = MHD_Result(rawValue: 0)!

/// What the C callbacks reach through their `cls` pointer: the settings, the responder and the
/// state shared by every connection.
final class DaemonContext: Sendable {
    let settings: TransportSettings
    let responder: any HTTPResponder
    /// Where streamed bodies go (nil: kept in memory).
    let uploads: (any UploadStorage)?
    let log: AccessLog
    let inFlight = Atomic<Int>(0)
    /// Set when shutdown begins: every answer from then on closes its connection, so a client
    /// that keeps pipelining requests cannot hold the shutdown until its deadline.
    let closing = Atomic<Bool>(false)
    /// Slow-client deadlines (nil when both are off).
    let watchdog: ConnectionWatchdog?
    /// Body bytes of requests in progress, against `maxInflightBytes`.
    let budget: InflightBudget
    /// Body bytes held in memory by requests in progress, against `effectiveMemoryBodyBytes`.
    let memoryBudget: InflightBudget
    /// Parked requests by their connection, so a shutdown can resume every one.
    let suspended = Lock<[ObjectIdentifier: Suspension]>([:])
    /// Requests whose answer is computed on the work pool, so a shutdown can answer them.
    let deferred = Lock<[ObjectIdentifier: WaitingForPool]>([:])

    /// A request waiting for the work pool, and its method (for the shutdown's answer).
    struct WaitingForPool: Sendable {
        let answer: DeferredResponse
        let method: String
    }

    init(
        settings: TransportSettings, uploads: (any UploadStorage)?, responder: any HTTPResponder,
        watchdog: ConnectionWatchdog?, memoryBudget: InflightBudget
    ) {
        self.settings = settings
        self.uploads = uploads
        self.responder = responder
        self.watchdog = watchdog
        log = AccessLog(enabled: settings.accessLog)
        budget = InflightBudget(limit: settings.maxInflightBytes)
        self.memoryBudget = memoryBudget
    }
}
