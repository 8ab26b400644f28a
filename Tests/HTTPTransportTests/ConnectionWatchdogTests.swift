import Testing

@testable import HTTPTransport

/// The slow-client deadlines, on a clock of their own (the live cuts are in the server's tests).
@Suite struct ConnectionWatchdogTests {
    /// The rate rule itself, on a clock of our own: a body at exactly the minimum (its first
    /// bytes a moment after its head, judged at the first tick after the window) is never cut,
    /// one short of it is, and a burst pays for its own window only.
    @Test func theRateIsJudgedPerWindowWithATickOfSlack() {
        let second: Int64 = 1_000_000_000
        let watchdog = ConnectionWatchdog(headerTimeoutSeconds: 2, minBodyBytesPerSecond: 5_000)
        let start: Int64 = 1_000 * second
        let exact = ConnectionWatchdog.Connection(fd: -1, now: start)
        // 5,000 B/s from 0.2 s to the judging tick.
        exact.phase.withLock { $0 = ConnectionWatchdog.Phase.receivingBody(since: start).adding(9_600) }
        #expect(!watchdog.isLate(exact, now: start + 2 * second + ConnectionWatchdog.tickNanos / 2))
        let short = ConnectionWatchdog.Connection(fd: -1, now: start)
        short.phase.withLock { $0 = ConnectionWatchdog.Phase.receivingBody(since: start).adding(8_000) }
        #expect(watchdog.isLate(short, now: start + 2 * second + ConnectionWatchdog.tickNanos / 2))
        let burst = ConnectionWatchdog.Connection(fd: -1, now: start)
        burst.phase.withLock { $0 = ConnectionWatchdog.Phase.receivingBody(since: start).adding(1_000_000) }
        #expect(!watchdog.isLate(burst, now: start + 2 * second), "the burst's own window is fine")
        burst.phase.withLock { $0 = $0.adding(100) }
        #expect(
            watchdog.isLate(burst, now: start + 4 * second + ConnectionWatchdog.tickNanos),
            "the next window brought 100 bytes")
    }
}
