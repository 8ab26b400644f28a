// Does ThreadSanitizer see Synchronization.Mutex on Linux? (docs/testing.md)
//
//   swiftc -O -sanitize=thread scripts/sanitizers/mutex-visibility.swift -o /tmp/mutex-visibility
//   /tmp/mutex-visibility mutex              4 threads, contended Mutex: TSan reports an access race,
//                                            yet the count is exact (the lock did exclude)
//   /tmp/mutex-visibility mutex-uncontended  the same Mutex, never contended: no report
//   /tmp/mutex-visibility pthread            the same work under pthread_mutex_t: no report
//   /tmp/mutex-visibility none               no lock at all: reports, and the count is wrong
//
// So the reports are about TSan, not the program: an uncontended Mutex is an atomic
// compare-exchange inlined into instrumented code, which TSan sees; a contended one spins in the
// uninstrumented Synchronization library and is handed over by the kernel (FUTEX_LOCK_PI /
// FUTEX_UNLOCK_PI), which TSan cannot see, so it misses the happens-before edge.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class Counter: @unchecked Sendable { var value = 0 }

/// ConcurrencyPrimitives' Lock in miniature (inlined so this file compiles on its own).
final class PthreadLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil) }
    func withLock<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

let variant = CommandLine.arguments.dropFirst().first ?? "mutex"
let threads = 4
let iterations = variant == "mutex-uncontended" ? 1_000 : 200_000
let counter = Counter()
let mutex = Mutex(())
let lock = PthreadLock()
let order = Atomic<Int>(0)

func work() {
    if variant == "mutex-uncontended" {
        // Each thread waits its turn by sleeping, which creates no happens-before edge.
        usleep(useconds_t(order.add(1, ordering: .relaxed).newValue * 300_000))
    }
    for _ in 0..<iterations {
        switch variant {
        case "mutex", "mutex-uncontended": mutex.withLock { _ in counter.value += 1 }
        case "pthread": lock.withLock { counter.value += 1 }
        default: counter.value += 1
        }
    }
}

var ids: [pthread_t] = []
for _ in 0..<threads {
    var id = pthread_t()
    pthread_create(&id, nil, { _ in work(); return nil }, nil)
    ids.append(id)
}
for id in ids { pthread_join(id, nil) }
print("\(variant): count \(counter.value), expected \(threads * iterations)")
