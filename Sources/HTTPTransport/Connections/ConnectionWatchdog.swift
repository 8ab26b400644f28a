import CMicroHTTPD
import ConcurrencyPrimitives
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deadlines for slow clients, which libmicrohttpd 0.9.75 does not keep: its connection timeout
/// only closes *idle* connections, so a client that sends one header line a second, or one body
/// byte a second, holds its connection slot for as long as it likes.
///
/// Each connection is tracked from accept (`MHD_OPTION_NOTIFY_CONNECTION`) to close. A watcher
/// thread shuts down (`shutdown(2)`) the socket of a connection whose request head has not
/// arrived within `headerTimeout` of the connection's start or of its previous answer, or whose
/// body brings fewer than `minBodyBytesPerSecond` over a window of `headerTimeout` (each window
/// on its own, the first starting with the body: an average since the start would let a burst
/// followed by a trickle keep the slot, and its in-flight reservation, for hours);
/// libmicrohttpd then sees the socket fail and closes the connection itself. Requests being
/// answered (handlers, parked long-polls, event streams) are never cut.
final class ConnectionWatchdog: Sendable {
    /// What one connection is doing, as far as the deadlines care.
    enum Phase: Sendable {
        /// Waiting for a request head since this time (after accept, or after an answer).
        case awaitingHead(sinceNanos: Int64)
        /// Receiving a body: this many bytes so far, and where the current window of the rate
        /// check began (time and byte count then; the first window starts with the body).
        case receivingBody(bytes: Int, windowNanos: Int64, windowBytes: Int)

        /// A body starting now.
        static func receivingBody(since: Int64) -> Phase {
            .receivingBody(bytes: 0, windowNanos: since, windowBytes: 0)
        }

        /// The same phase with `count` more body bytes received.
        func adding(_ count: Int) -> Phase {
            guard case .receivingBody(let bytes, let window, let windowBytes) = self else { return self }
            let (sum, overflow) = bytes.addingReportingOverflow(count)
            return .receivingBody(bytes: overflow ? .max : sum, windowNanos: window, windowBytes: windowBytes)
        }
        /// A handler, a parked request or a stream owns it: no deadline.
        case answering
    }

    /// One open connection: its socket and phase.
    final class Connection: Sendable {
        let fd: Int32
        let phase: Lock<Phase>
        init(fd: Int32, now: Int64) {
            self.fd = fd
            phase = Lock(.awaitingHead(sinceNanos: now))
        }
    }

    private let headerTimeoutNanos: Int64
    private let minBodyBytesPerSecond: Int
    // Registration and the watcher's shutdown both hold this lock, so a socket is never shut
    // down after libmicrohttpd was told of its close (its descriptor may be reused by then).
    private let open = Lock<[ObjectIdentifier: Connection]>([:])
    private let running = Atomic<Bool>(true)
    /// Connections cut so far (for metrics and tests).
    let cut = Atomic<Int>(0)
    /// How often deadlines are checked.
    static let tickNanos: Int64 = 250_000_000

    /// A watchdog with these deadlines; `start` begins checking.
    init(headerTimeoutSeconds: Int, minBodyBytesPerSecond: Int) {
        headerTimeoutNanos = Int64(headerTimeoutSeconds) * 1_000_000_000
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
    }

    /// Starts the watcher thread.
    func start() throws(ThreadStartError) {
        try DetachedThread.start(name: "feed-watchdog") { [self] in
            while running.load(ordering: .relaxed) {
                usleep(useconds_t(Self.tickNanos / 1000))
                check(now: MonotonicClock.nanos())
            }
        }
    }

    /// Stops the watcher thread (shutdown).
    func stop() { running.store(false, ordering: .relaxed) }

    /// Connections open right now.
    var openCount: Int { open.withLock { $0.count } }

    /// A connection was accepted.
    func opened(fd: Int32) -> Connection {
        let connection = Connection(fd: fd, now: MonotonicClock.nanos())
        open.withLock { $0[ObjectIdentifier(connection)] = connection }
        return connection
    }

    /// A connection is about to be closed by libmicrohttpd.
    func closed(_ connection: Connection) {
        open.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    private func check(now: Int64) {
        open.withLock { open in
            for connection in open.values where isLate(connection, now: now) {
                // The connection is still registered (we hold the lock), so `fd` is its socket.
                shutdown(connection.fd, Int32(SHUT_RDWR))
                cut.add(1, ordering: .relaxed)
            }
        }
    }

    /// Whether `connection` has missed its deadline at `now` (moving its rate window on when not).
    func isLate(_ connection: Connection, now: Int64) -> Bool {
        connection.phase.withLock { phase in
            switch phase {
            case .answering:
                return false
            case .awaitingHead(let since):
                return now - since > headerTimeoutNanos
            case .receivingBody(let bytes, let window, let windowBytes):
                let elapsed = now - window
                guard elapsed >= headerTimeoutNanos, minBodyBytesPerSecond > 0 else { return false }
                // Doubles: a byte count times 10^9 could overflow an Int64. One tick of slack: the
                // window is judged at the first tick after it ends, and a body's first bytes come a
                // moment after its head, so a client at exactly the rate is never short of it.
                let owed = Double(minBodyBytesPerSecond) * Double(elapsed - Self.tickNanos) / 1e9
                guard Double(bytes - windowBytes) >= owed else { return true }
                phase = .receivingBody(bytes: bytes, windowNanos: now, windowBytes: bytes)
                return false
            }
        }
    }
}
