import ConcurrencyPrimitives
import FeedStore
import Synchronization

/// Encodes an upload's images while the rest of its body still arrives: each image's first
/// attempt under the budget goes into the encode cache, where the pack that follows the body
/// finds it. Without it every decode would start after the last byte arrived.
///
/// At most `maxThreads` prefetch threads run at once for the whole server, one per upload; an
/// upload that finds none free leaves its images to its pack. While any pack runs, whose threads
/// take every core, no image is prefetched: it would add its decode's memory and gain nothing.
public final class ImagePrefetcher: Sendable {
    let encoder: VipsImageEncoder
    private let freeThreads: Atomic<Int>

    /// A prefetcher encoding with `encoder` on at most `maxThreads` threads.
    public init(encoder: VipsImageEncoder, maxThreads: Int) {
        self.encoder = encoder
        freeThreads = Atomic(max(0, maxThreads))
    }

    /// A batch for one upload packed under `budget`.
    public func batch(budget: AssetBudget) -> ImagePrefetchBatch { ImagePrefetchBatch(self, budget: budget) }

    func takeThread() -> Bool {
        var free = freeThreads.load(ordering: .relaxed)
        while free > 0 {
            let (exchanged, original) = freeThreads.compareExchange(
                expected: free, desired: free - 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            free = original
        }
        return false
    }

    func giveThread() { freeThreads.add(1, ordering: .acquiringAndReleasing) }

    /// Threads not taken by a batch (tests).
    var freeThreadCount: Int { freeThreads.load(ordering: .acquiring) }
}

/// One upload's images, encoded in arrival order on one thread until the pack lends that thread
/// its own work or the upload is cancelled.
public final class ImagePrefetchBatch: @unchecked Sendable {
    /// An image to encode. Its file lives in the request's upload folder, which the request
    /// removes when it ends: a job then fails, unseen, and a running one reads on from its
    /// open descriptor.
    struct Job: Sendable {
        var name: String
        var source: AssetSource
    }

    typealias Queue = PrefetchQueue<Job, @Sendable () -> Void>

    private let prefetcher: ImagePrefetcher
    private let budget: AssetBudget
    // Guarded by `lock`.
    private var queue = Queue()
    private let lock = ConditionLock()

    init(_ prefetcher: ImagePrefetcher, budget: AssetBudget) {
        self.prefetcher = prefetcher
        self.budget = budget
    }

    /// Queues the image named `name` (its name decides the stored format).
    public func add(name: String, source: AssetSource) {
        guard !prefetcher.encoder.isPacking else { return }
        let job = Job(name: name, source: source)
        guard lock.withLock({ queue.add(job) }) == .startWorker else { return }
        guard prefetcher.takeThread() else { return noWorker() }
        do {
            try DetachedThread.start(name: "feed-prefetch") { [self] in
                // Started from a connection's thread: lowered like the threads that pack, or
                // reads would wait behind the decoding (and libvips' workers it starts keep the
                // priority they are born with).
                ThreadPriority.lowerCurrentThread()
                work()
            }
        } catch {
            prefetcher.giveThread()
            noWorker()
        }
    }

    private func noWorker() {
        _ = lock.withLock {
            defer { lock.broadcast() }  // a pack waiting for work it lent meanwhile
            return queue.workerUnavailable()
        }
    }

    /// Drops the images not begun (the one being encoded finishes): the upload was refused, its
    /// client left, or its publish is done.
    public func cancel() {
        _ = lock.withLock { queue.cancel() }
    }

    /// Has the running prefetch thread, after its current image, run `work` instead of the
    /// images still queued; false when no thread runs.
    func lend(_ work: @escaping @Sendable () -> Void) -> Bool {
        let (lent, _) = lock.withLock { queue.lend(work) }
        return lent
    }

    /// Waits until the work `lend` handed over has run (call only after `lend` answered true).
    func waitForLentWork() {
        lock.withLock {
            while !queue.lentWorkDone { lock.wait() }
        }
    }

    private func work() {
        while let step = nextStep() {
            switch step {
            case .prefetch(let job):
                // Left to the pack when another pack runs meanwhile.
                guard !prefetcher.encoder.isPacking else { continue }
                prefetcher.encoder.encodeFirstAttempt(name: job.name, source: job.source, budget: budget)
            case .help(let lent):
                lent()
                lock.withLock {
                    queue.lentWorkFinished()
                    lock.broadcast()
                }
            }
        }
    }

    /// The worker's next step; when there is none, its thread is given back before another
    /// `add` can find the queue idle and ask for one.
    private func nextStep() -> Queue.Step? {
        lock.withLock {
            let step = queue.next()
            if step == nil { prefetcher.giveThread() }
            return step
        }
    }
}

/// The jobs of one upload's prefetch, whether a thread works on them, and the work a pack lends
/// that thread: a value, so its transitions are tested without threads.
struct PrefetchQueue<Job, Work> {
    /// Jobs not begun, oldest first.
    private(set) var pending: [Job] = []
    /// Whether a worker thread is running (or being started) for these jobs.
    private(set) var working = false
    /// Whether the upload was cancelled: nothing more is queued or begun.
    private(set) var cancelled = false
    private var lent = Lent.none

    private enum Lent {
        case none
        case offered(Work)
        case running
        case done
    }

    /// What the caller of `add` does next.
    enum AddAction: Equatable {
        /// Start a worker thread (none runs).
        case startWorker
        /// Nothing: a worker will take the job, or the queue takes no more.
        case none
    }

    /// What the worker does next.
    enum Step {
        /// Encode this job's image.
        case prefetch(Job)
        /// Run the work a pack lent.
        case help(Work)
    }

    /// Whether the lent work has run.
    var lentWorkDone: Bool {
        if case .done = lent { return true }
        return false
    }

    /// Queues a job, asking for a worker when none runs; refused once cancelled or lent to.
    mutating func add(_ job: Job) -> AddAction {
        guard !cancelled, case .none = lent else { return .none }
        pending.append(job)
        if working { return .none }
        working = true
        return .startWorker
    }

    /// The worker's next step; nil stops the worker.
    mutating func next() -> Step? {
        if case .offered(let work) = lent {
            lent = .running
            return .help(work)
        }
        guard !cancelled, case .none = lent, !pending.isEmpty else {
            working = false
            return nil
        }
        return .prefetch(pending.removeFirst())
    }

    /// Hands `work` to the running worker, dropping the jobs not begun (returned); false when no
    /// worker runs or work was lent already.
    mutating func lend(_ work: Work) -> (lent: Bool, dropped: [Job]) {
        guard working, case .none = lent else { return (false, []) }
        lent = .offered(work)
        defer { pending.removeAll() }
        return (true, pending)
    }

    /// The worker finished the lent work.
    mutating func lentWorkFinished() { lent = .done }

    /// No worker could start: the queued jobs are left to the pack (returned), and so is work
    /// lent meanwhile (it counts as done); a later `add` tries again.
    mutating func workerUnavailable() -> [Job] {
        working = false
        if case .offered = lent { lent = .done }
        defer { pending.removeAll() }
        return pending
    }

    /// Takes no more jobs and drops those not begun (returned); lent work still runs.
    mutating func cancel() -> [Job] {
        cancelled = true
        defer { pending.removeAll() }
        return pending
    }
}

extension VipsImageEncoder {
    /// Encodes the first attempt `pack` makes for this image into the encode cache; a failure is
    /// left for the pack to meet and report.
    func encodeFirstAttempt(name: String, source: AssetSource, budget: AssetBudget) {
        guard let format = outputFormat(name: name, source: source) else { return }
        _ = try? warmedRenderer(for: source, format: format, budget: budget)
    }
}
