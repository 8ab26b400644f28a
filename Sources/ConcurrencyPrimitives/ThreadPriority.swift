#if canImport(Glibc)
import CThreadScheduling
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The priority of the threads that prepare images (decoding, resizing, encoding), and the time
/// slices of the threads that answer requests.
///
/// Image work runs ten `nice` levels below the rest of the server, on threads of its own; the
/// threads that answer requests ask for short time slices, so one that wakes takes a core from
/// image work at once instead of at the end of its slice (Linux 6.12 and later: elsewhere the
/// request is ignored). Publishes, deletes, listings and the waiters' renders run at normal
/// priority. Linux's idle class (`SCHED_IDLE`) was tried for image work and left: beside a
/// build that kept both cores busy, 12 photos took 162 s to publish, against 4.7 s at nice +10
/// (docs/benchmarks.md).
public enum ThreadPriority {
    /// How far below the server's own threads image work runs.
    static let imageNiceOffset: Int32 = 10

    /// Lowers the calling thread (and every thread it starts later, which inherits it, libvips'
    /// workers included) `imageNiceOffset` nice levels, at most to 19, with the default time
    /// slice (a thread started from libmicrohttpd's would inherit their short one). `nice` is per
    /// thread on Linux, and one way: without `CAP_SYS_NICE` a lowered thread cannot be raised
    /// again, so lowered work gets a thread of its own. A policy other than the fair scheduler's
    /// (real-time, set by the user) is left alone.
    public static func lowerCurrentThread() {
        #if os(Linux)
        var attributes = sched_attr()
        if CThreadScheduling_get(&attributes) == 0 {
            guard CThreadScheduling_is_fair(attributes.sched_policy) != 0 else { return }
            attributes.sched_nice = min(19, attributes.sched_nice + imageNiceOffset)
            attributes.sched_runtime = 0
            if CThreadScheduling_set(&attributes) == 0 { return }
        }
        // Kernels or sandboxes without sched_getattr/sched_setattr: the nice value alone.
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)  // 0: the calling thread
        guard errno == 0 else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, current + imageNiceOffset))
        #elseif canImport(Darwin)
        _ = setpriority(PRIO_DARWIN_THREAD, 0, PRIO_DARWIN_BG)  // Darwin's per-thread equivalent
        #endif
    }

    /// Runs `start` with the calling thread's time slice set to `microseconds`, so the threads it
    /// starts (libmicrohttpd's) inherit it, then gives the caller the default slice back (so it
    /// follows the kernel's `sched_base_slice` again). Only under the fair scheduler; a kernel
    /// that does not know slices (before 6.12) ignores them.
    public static func startingThreadsWithShortSlices<T>(
        microseconds: UInt64 = 100, _ start: () throws -> T
    ) rethrows -> T {
        #if os(Linux)
        var saved = sched_attr()
        var applied = false
        if CThreadScheduling_get(&saved) == 0, CThreadScheduling_is_fair(saved.sched_policy) != 0 {
            var short = saved
            short.sched_runtime = min(microseconds, 1_000_000) * 1_000
            applied = CThreadScheduling_set(&short) == 0
        }
        saved.sched_runtime = 0  // the default: sched_getattr reports the slice in use
        defer { if applied { _ = CThreadScheduling_set(&saved) } }
        #endif
        return try start()
    }

    /// The calling thread's time slice in nanoseconds as the kernel reports it (0 before Linux 6.12).
    public static var currentSliceNanoseconds: UInt64 {
        #if os(Linux)
        var attributes = sched_attr()
        return CThreadScheduling_get(&attributes) == 0 ? attributes.sched_runtime : 0
        #else
        0
        #endif
    }

    /// Runs `work` on a new thread named `name`, at the lowered priority, and waits for its
    /// result and for the thread to end: the caller keeps its own priority for what it does next.
    public static func runLowered<T: Sendable>(
        name: String, _ work: @escaping @Sendable () -> T
    ) throws(ThreadStartError) -> T {
        let result = ResultSlot<T>()
        let thread = try JoinableThread {
            lowerCurrentThread()
            DetachedThread.nameCurrentThread(name)  // after lowering: seen under its name, it is lowered
            result.value = work()
        }
        thread.join()
        guard let value = result.value else { preconditionFailure("the lowered thread ended without a result") }
        return value
    }

    /// The value a thread leaves for the one that joins it (`pthread_join` orders the write
    /// before the read, so no lock is needed).
    private final class ResultSlot<T: Sendable>: @unchecked Sendable {
        var value: T?
    }
}
