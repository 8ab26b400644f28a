#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work a job wants done on its own thread once its answer is on its way.
///
/// A publish wakes every long-poll on its feed; woken inside the publish, a thousand of them are
/// resumed before the publishing request itself, and libmicrohttpd answers them first: the
/// client that published waited for all of its watchers. A job wrapped in `collecting` has what
/// it deferred with `run` done after it returns, when its answer has been handed over.
public enum AfterAnswer {
    /// What one `collecting` scope deferred, in order.
    private final class Deferred {
        var actions: [() -> Void] = []
    }

    /// The innermost scope of each thread (a `Deferred`, retained by its `collecting` call).
    private static let scopeKey: pthread_key_t = {
        var key = pthread_key_t()
        checkPthread(pthread_key_create(&key, nil), "pthread_key_create")
        return key
    }()

    /// Runs `body`, then, on this thread, what it deferred with `run`, in the order deferred.
    public static func collecting<Value>(_ body: () -> Value) -> Value {
        let deferred = Deferred()
        let outer = pthread_getspecific(scopeKey)
        checkPthread(
            pthread_setspecific(scopeKey, Unmanaged.passUnretained(deferred).toOpaque()), "pthread_setspecific")
        let result = withExtendedLifetime(deferred) { body() }
        checkPthread(pthread_setspecific(scopeKey, outer), "pthread_setspecific")
        // Run outside the scope: what they defer in turn runs at once (or in the outer scope).
        for action in deferred.actions { action() }
        return result
    }

    /// Defers `action` to the end of this thread's innermost `collecting`, or runs it now when
    /// the thread is in none (a seed watcher's publish, the command line).
    public static func run(_ action: @escaping () -> Void) {
        guard let scope = pthread_getspecific(scopeKey) else { return action() }
        Unmanaged<Deferred>.fromOpaque(scope).takeUnretainedValue().actions.append(action)
    }

    /// Whether this thread is in a `collecting` scope.
    public static var isCollecting: Bool { pthread_getspecific(scopeKey) != nil }
}
