#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The priority of the threads that prepare images (decoding, resizing, encoding).
///
/// Only image work is lowered. Publishes, deletes, listings and the waiters' renders run at
/// normal priority: beside a build that keeps every core busy, an idle-class thread gets a
/// sliver of a CPU, and a 0.5 ms JSON publish took 90–200 ms (docs/benchmarks.md).
public enum ThreadPriority {
    /// Runs the calling thread (and every thread it starts later, which inherits it, libvips'
    /// workers included) under `SCHED_IDLE` (`sched_setscheduler`): on a small machine a photo
    /// publish would otherwise take the cores from libmicrohttpd's threads, and reads answered
    /// from memory would wait for a CPU. Under nice 19 a woken reader still waits behind the
    /// image work often enough to triple the read p99 (docs/benchmarks.md); an
    /// idle-class thread is preempted by any normal thread that wakes. It still gets the CPU
    /// whenever nothing else wants it, and a sliver when something always does. Falls back to
    /// nice 19 where the policy is refused. Both are per thread on Linux, and one way: without
    /// `CAP_SYS_NICE` a lowered thread cannot be raised again, so lowered work gets its own thread.
    public static func lowerCurrentThread() {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        if sched_setscheduler(0, idlePolicy, &parameters) != 0 {  // 0: the calling thread
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        }
        #elseif canImport(Darwin)
        _ = setpriority(PRIO_DARWIN_THREAD, 0, PRIO_DARWIN_BG)  // Darwin's per-thread equivalent
        #endif
    }

    /// Runs `work` on a new thread named `name`, at the lowered priority, and waits for its
    /// result: the caller keeps its own priority for what it does next.
    public static func runLowered<T: Sendable>(
        name: String, _ work: @escaping @Sendable () -> T
    ) throws(ThreadStartError) -> T {
        let result = Handoff<T>()
        try DetachedThread.start(name: name) {
            lowerCurrentThread()
            result.fill(work())
        }
        return result.take()
    }

    /// One value handed from a thread to the one waiting for it.
    private final class Handoff<T: Sendable>: @unchecked Sendable {
        private let condition = ConditionLock()
        private var value: T?  // guarded by `condition`

        func fill(_ filled: T) {
            condition.withLock {
                value = filled
                condition.broadcast()
            }
        }

        func take() -> T {
            condition.withLock {
                while true {
                    if let value { return value }
                    condition.wait()
                }
            }
        }
    }

    #if os(Linux)
    /// `SCHED_IDLE` from <sched.h> (defined only under `_GNU_SOURCE`, so not imported).
    private static let idlePolicy: Int32 = 5
    #endif
}
