import ConcurrencyPrimitives
import FeedStore

/// The store's notifier: tells every listener (waiters, the redraw hook) about each publish that
/// changed a feed. Listeners are added after the store exists, since they are built on it.
final class PublishBroadcaster: PublishNotifier {
    private let listeners = Lock<[@Sendable (PublishEvent) -> Void]>([])

    /// Adds a listener; it runs on the publishing thread, so it must not block.
    func add(_ listener: @escaping @Sendable (PublishEvent) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Drops every listener (at shutdown: they hold parts of the server that hold the store).
    func removeAll() {
        listeners.withLock { $0.removeAll() }
    }

    func feedPublished(_ event: PublishEvent) {
        for listener in listeners.withLock({ $0 }) { listener(event) }
    }
}
