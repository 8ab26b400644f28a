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

/// A change to a group's feed, reported to whoever waits for it and to the `--on-publish` hook.
public struct PublishEvent: Equatable, Sendable {
    /// What changed the feed.
    public enum Kind: String, Equatable, Sendable {
        /// A publish wrote a new generation.
        case publish
        /// A DELETE removed the feed.
        case delete
        /// The fault lab wrote a broken state.
        case fault
    }

    /// What changed the feed.
    public var kind: Kind
    /// The group that changed.
    public var group: String
    /// The group's folder on disk.
    public var groupDirectory: String
    /// The generation written or named (nil: a DELETE, or a fault that names none).
    public var generationId: String?
    /// That generation's fingerprint, when its `feed.json` declares one.
    public var fingerprint: String?
    /// That generation's folder, when it exists.
    public var directory: String?
    /// The fault-lab kind when the change is an injected fault, nil otherwise.
    public var fault: String?
}

/// Told after every change to a feed (a publish that wrote a generation, never `unchanged`; a
/// DELETE that removed a feed; a fault): the server's "redraw".
public protocol PublishNotifier: Sendable {
    /// Called after the change is durable, outside the group lock.
    func feedPublished(_ event: PublishEvent)
}

/// A notifier that does nothing.
public struct SilentNotifier: PublishNotifier {
    /// Creates the silent notifier.
    public init() {}
    public func feedPublished(_ event: PublishEvent) {}
}
