#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the store gets "now" from; injectable so tests control generation ids and retention.
public protocol FeedClock: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowEpochMs() -> Int64
}

/// The wall clock (`clock_gettime(CLOCK_REALTIME)`).
public struct SystemClock: FeedClock {
    /// Creates the wall clock.
    public init() {}

    public func nowEpochMs() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

/// What a publish that changed the feed reports to whoever waits for it.
public struct PublishEvent: Equatable, Sendable {
    /// The group that changed.
    public var group: String
    /// The new generation's id.
    public var generationId: String
    /// The new generation's fingerprint.
    public var fingerprint: String
    /// The new generation's folder on disk.
    public var directory: String
    /// The fault-lab kind when the change is an injected fault, nil for a real publish.
    public var fault: String? = nil
}

/// Told after every publish that changed a feed (never for `unchanged`): the server's "redraw".
public protocol PublishNotifier: Sendable {
    /// Called after the pointer switch is durable, outside the group lock.
    func feedPublished(_ event: PublishEvent)
}

/// A notifier that does nothing.
public struct SilentNotifier: PublishNotifier {
    /// Creates the silent notifier.
    public init() {}
    public func feedPublished(_ event: PublishEvent) {}
}
