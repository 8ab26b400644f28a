#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The priority of the threads that do slow work (publishes, image preparation, seeding).
public enum ThreadPriority {
    /// Runs the calling thread (and every thread it starts later, which inherits it, libvips'
    /// workers included) under `SCHED_IDLE` (`sched_setscheduler`): on a small machine a photo
    /// publish would otherwise take the cores from libmicrohttpd's threads, and reads answered
    /// from memory would wait for a CPU. Under nice 19 a woken reader still waits behind the
    /// image work often enough to triple the read p99 (docs/benchmarks.md); an
    /// idle-class thread is preempted by any normal thread that wakes. It still gets the CPU
    /// whenever nothing else wants it, and a sliver when something always does. Falls back to
    /// nice 19 where the policy is refused. Both are per thread on Linux.
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

    /// Runs `work` on a new thread at the lowered priority and waits for its result (for slow
    /// work the caller's own thread cannot be lowered for: seeding at start-up, so the libvips
    /// workers it leaves behind for later publishes do not run at normal priority).
    public static func runLowered<T: Sendable>(_ work: @escaping @Sendable () -> T) throws(ThreadStartError) -> T {
        let result = Handoff<T>()
        try DetachedThread.start {
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
