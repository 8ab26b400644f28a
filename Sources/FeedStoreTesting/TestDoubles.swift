import ConcurrencyPrimitives
import FeedStore

/// A clock that says what the test tells it to ("injectable clock").
public final class FixedClock: FeedClock, @unchecked Sendable {
    private let now: Lock<Int64>

    /// Starts at `epochMs`.
    public init(epochMs: Int64) { now = Lock(epochMs) }

    /// The current time.
    public func nowEpochMs() -> Int64 { now.withLock { $0 } }

    /// Moves time forward (or back, with a negative value).
    public func advance(byMs delta: Int64) { now.withLock { $0 += delta } }

    /// Sets the time.
    public func set(epochMs: Int64) { now.withLock { $0 = epochMs } }
}

/// Counts publish notifications and keeps them ("counting notifier").
public final class CountingNotifier: PublishNotifier, @unchecked Sendable {
    private let events = Lock<[PublishEvent]>([])

    /// Creates a notifier with no events.
    public init() {}

    /// How many publishes changed a feed.
    public var count: Int { events.withLock { $0.count } }

    /// The events, oldest first.
    public var received: [PublishEvent] { events.withLock { $0 } }

    public func feedPublished(_ event: PublishEvent) { events.withLock { $0.append(event) } }
}
