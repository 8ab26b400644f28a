#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of threads for slow handlers (publishes, DELETE, listings, history, timelines),
/// so libmicrohttpd's threads keep answering cached reads, 304s, assets and `/healthz` while a
/// photo publish takes a second. The queue is bounded: past it, callers answer 503.
public final class WorkPool: @unchecked Sendable {
    // `condition` guards `jobs`, `head` and `stopping`.
    private let condition = ConditionLock()
    /// Queued jobs from `head` on; slots before it are cleared as jobs start.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var stopping = false
    /// Workers waiting for a job.
    private var parked = 0
    private let queueLimit: Int

    /// Starts `threads` workers named `name`; at most `queueLimit` jobs wait. They run at normal
    /// priority: image work lowers itself on threads of its own (`ThreadPriority.runLowered`).
    public init(threads: Int, queueLimit: Int, name: String = "feed-pool") throws(ThreadStartError) {
        self.queueLimit = max(1, queueLimit)
        for _ in 0..<max(1, threads) {
            try DetachedThread.start(name: name) { [self] in work() }
        }
    }

    /// Queues a job; false when the queue is full or the pool is stopping (the job is not run).
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let queued = condition.withLock {
            guard !stopping, jobs.count - head < queueLimit else { return false }
            jobs.append(job)
            return true
        }
        // Signalled after the mutex is let go: a worker woken while the submitter still held it
        // would only block on the mutex again (a second wake and context switch per job).
        if queued { condition.signal() }
        return queued
    }

    /// Jobs waiting (not yet started).
    public var waiting: Int { condition.withLock { jobs.count - head } }

    /// Workers waiting for a job (for tests: a job submitted when all wait needs the submitter's wake).
    var parkedWorkers: Int { condition.withLock { parked } }

    /// Lets queued jobs finish, then ends the workers; later submissions are refused.
    public func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    private func work() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        condition.withLock {
            while head == jobs.count {
                if stopping { return nil }
                parked += 1
                condition.wait()
                parked -= 1
            }
            let job = jobs[head]
            // A started job must not stay in the queue: it would keep everything it captured
            // (the routes, the pipeline and so this pool) alive until the next compaction, or forever.
            jobs[head] = nil
            head += 1
            // Compact now and then so the array does not grow without bound.
            if head > 256, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }
}
