import ConcurrencyPrimitives
import FeedImaging
import FeedStore
import HTTPTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running service: the store, the routes and the HTTP daemon, wired together.
final class Server: Sendable {
    /// Why the server could not start; the command reports it and exits with status 2.
    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    let store: FeedStore
    /// Request counters and publish latency, served at `/metrics`.
    let metrics: Metrics
    private let waiters: Waiters
    /// Rendered feed reads.
    let cache: FeedResponseCache
    /// Tells the cache, the waiters and the hook of every change; emptied at shutdown.
    private let broadcaster: PublishBroadcaster
    private let pool: WorkPool
    /// The diagnostics lane's one thread (`WorkLane.diagnostics`).
    private let diagnostics: WorkPool
    private let images: WorkPool
    private let faultLab: FaultLab?
    /// `--watch`: the seed folder's watcher.
    private let watcher: SeedWatcher?
    let daemon: HTTPDaemon
    private let shutDown = Atomic<Bool>(false)
    /// The options it was started with.
    let options: ServerOptions
    /// The image encoder every publish, seed and archive shares.
    let encoder: VipsImageEncoder
    /// Decodes multipart publishes' images while their bodies arrive.
    let prefetcher: ImagePrefetcher

    /// Prepares the root, builds the routes and starts listening.
    init(options: ServerOptions) throws {
        self.options = options
        let broadcaster = PublishBroadcaster()
        self.broadcaster = broadcaster
        let store = FeedStore(root: options.root, configuration: options.storeConfiguration, notifier: broadcaster)
        try Self.prepareRoot(of: store)
        store.sweepLeftovers()
        // Asset parts of multipart publishes are streamed here, not held in memory.
        let uploads = UploadArea(root: options.root)
        do {
            try uploads.prepare()
        } catch {
            throw StartError(description: "upload folder '\(uploads.path)' cannot be prepared: \(error)")
        }
        self.store = store
        let encoder: VipsImageEncoder
        do {
            encoder = try VipsImageEncoder(maxPixels: options.maxImagePixels)
        } catch {
            throw StartError(description: "\(error)")
        }
        var transport = options.transport
        if transport.threads <= 0 { transport.threads = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
        let threads = transport.threads
        // One budget for bodies kept in memory and for what publishes parse, the transport's.
        let memoryBudget = InflightBudget(limit: transport.effectiveMemoryBodyBytes)
        let metrics = Metrics(memoryBudget: memoryBudget)
        self.metrics = metrics
        // Publishes without images, DELETEs, listings, timelines: at least two workers, so one
        // slow listing does not hold the others.
        let pool = try Self.starting("the work pool") { () throws(ThreadStartError) in
            try WorkPool(threads: max(2, threads), queueLimit: 1024)
        }
        self.pool = pool
        // One thread for the journal's reads and verification (`WorkLane.diagnostics`).
        let diagnostics = try Self.starting("the diagnostics thread") { () throws(ThreadStartError) in
            try WorkPool(threads: 1, queueLimit: 256, name: "feed-diagnose")
        }
        self.diagnostics = diagnostics
        // Publishes with images (`WorkLane.images`): their threads wait while lowered threads
        // pack, so photo publishes never hold every thread of the pool above.
        let images = try Self.starting("the image publishes' pool") { () throws(ThreadStartError) in
            try WorkPool(threads: max(2, threads), queueLimit: 1024, name: "feed-uploads")
        }
        self.images = images
        // With a read token every read answer says `private`, decided once for the caches' answers.
        let caching = ReadCaching(isPrivate: options.readToken != nil)
        let reads = ReadCounts(since: SystemClock().nowEpochMs())
        let recent = options.recentRequests > 0 ? RecentRequests(capacity: options.recentRequests) : nil
        let cache = FeedResponseCache(
            store: store, budgetBytes: options.readCacheBytes, caching: caching, reads: reads)
        self.cache = cache
        let waiters = try Self.starting("the waiters' watcher") { () throws(ThreadStartError) in
            try Waiters(cache: cache, metrics: metrics, capacity: options.maxWaiters)
        }
        self.waiters = waiters
        // Strong, and dropped at shutdown (`removeAll`): the store holds the broadcaster and the
        // waiters hold the store, a cycle only that breaks. Not weak: a weak reference's side
        // table, alive until exit, looks leaked to LeakSanitizer (docs/testing.md).
        // The cache first: a waiter woken next renders what is current, and a deleted feed's
        // bytes are given back at once.
        broadcaster.add { cache.forget(group: $0.group) }
        // After the publishing request's own answer: woken first, a thousand long-polls were
        // answered before the client that published.
        broadcaster.add { event in AfterAnswer.run { waiters.feedChanged(group: event.group) } }
        if let command = options.onPublish {
            let hook = PublishHook(command: command, timeoutSeconds: options.onPublishTimeoutSeconds)
            broadcaster.add { hook.run(for: $0) }
        }
        let lint = FeedLint(androidScreen: options.androidScreen)
        let journal = options.journal ? WriteJournal(file: JournalFile(root: options.root)) : nil
        do { try journal?.file.prepare() } catch {
            throw StartError(description: "cannot make the journal's folder: \(journal?.file.reason(error) ?? "")")
        }
        let faultLab = options.faultLab ? FaultLab() : nil
        var feeds = FeedRoutes(
            store: store, cache: cache, encoder: encoder, imagingThreads: threads, metrics: metrics, waiters: waiters,
            maxBodyBytes: transport.maxBodyBytes, lint: lint)
        feeds.lab = faultLab
        feeds.memory = memoryBudget
        feeds.lintPool = pool
        // The upload holds a thread while it arrives; the prefetch takes the others (none with one).
        let prefetcher = ImagePrefetcher(encoder: encoder, maxThreads: threads - 1)
        feeds.prefetcher = prefetcher
        self.encoder = encoder
        self.prefetcher = prefetcher
        // --seed: every group published before the first request; --watch follows edits.
        var watcher: SeedWatcher?
        if let seed = options.seed {
            let seeds = SeedPublisher(
                folder: SeedFolder(path: seed), store: store, encoder: encoder, threads: threads,
                maxAssets: transport.maxParts, maxAssetBytes: transport.maxBodyBytes, lint: lint,
                strict: options.seedStrict, journal: journal, uploads: uploads)
            if options.watch { watcher = try SeedWatcher(publisher: seeds) }
            let seeded = Result { () throws(SeedError) in try seeds.publishAll() }
            switch seeded {
            case .failure(let error): throw StartError(description: "--seed '\(seed)': \(error.description)")
            case .success(let outcomes) where options.seedStrict: try Self.requireEveryGroup(outcomes, seed: seed)
            case .success: break
            }
        }
        self.watcher = watcher
        self.faultLab = faultLab
        let faults = FaultRoutes(store: store, lab: faultLab, metrics: metrics)
        let rotation = RotationRoutes(clock: SystemClock())
        let timeline = TimelineRoutes(store: store, cache: cache, clock: SystemClock())
        let archives = ArchiveRoutes(
            feeds: feeds, uploads: uploads, maxEntries: transport.maxParts,
            notModifiedStatesLength: transport.notModifiedStatesLength)
        let assets = AssetRoutes(store: store, caching: caching)
        let router = Router(
            routes: feeds.routes + [archives.route] + faults.routes + rotation.routes + timeline.routes
                + ProfileRoutes(store: store, cache: cache).routes
                + JournalRoutes(journal: journal, reads: reads, recent: recent).routes
                + RefreshRoutes(store: store, journal: journal, budget: options.iosReloadBudget, clock: SystemClock())
                .routes
                + [assets.route]
                + OperationsRoutes(metrics: metrics).routes + PreviewRoutes().routes)
        metrics.register(routes: router.routes.map(\.name))
        let authorization = Authorization(
            writeToken: options.token, readToken: options.readToken,
            alsoOpen: options.faultLab ? [] : [FaultRoutes.template])
        var cors: CORSPolicy?
        if let origins = options.corsOrigin {
            do { cors = try CORSPolicy(parsing: origins) } catch {
                throw StartError(description: "--cors-origin: \(error)")
            }
        }
        let pipeline = RequestPipeline(
            router: router, authorization: authorization, cors: cors, caching: caching, metrics: metrics, pool: pool,
            diagnosticsPool: diagnostics, imagesPool: images, journal: journal, recent: recent)
        do {
            daemon = try HTTPDaemon(
                settings: transport, uploads: StoreUploads(area: uploads), responder: pipeline,
                memoryBudget: memoryBudget)
        } catch {
            throw StartError(description: "\(error)")
        }
        do {
            try watcher?.start()
        } catch {
            daemon.stop()
            throw StartError(description: "cannot start the --watch thread: \(error)")
        }
    }

    /// Creates the root (and missing parents) and proves it writable; a failure is said for the
    /// operator, a file in a folder's place above all (`mkdir` says only "not a directory").
    static func prepareRoot(of store: FeedStore) throws(StartError) {
        do {
            try store.prepareRoot()
        } catch {
            var reason = "\(error)"
            if error.kind == .notADirectory {
                // `prepareRoot` walks a relative root from `./`, so both are compared without it.
                func plain(_ path: String) -> String {
                    var path = Substring(path)
                    while path.hasPrefix("./") { path = path.dropFirst(2) }
                    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
                    return String(path)
                }
                let place = plain(error.path)
                reason =
                    place == plain(store.root) ? "it is a file, not a folder" : "'\(place)' is a file, not a folder"
            }
            throw StartError(description: "root folder '\(store.root)' cannot be created or written: \(reason)")
        }
    }

    /// `--seed-strict` at start: every group published (or unchanged), or the start stops
    /// naming those that were not; each was logged with its warnings or its reason already.
    private static func requireEveryGroup(_ outcomes: [String: SeedPublisher.Outcome], seed: String) throws(StartError)
    {
        let missing = outcomes.sorted { $0.key < $1.key }.compactMap { group, outcome -> String? in
            switch outcome {
            case .published, .unchanged: return nil
            case .refused(let warnings): return "'\(LogSafe.name(group))' (\(warnings) platform-limit warning(s))"
            case .failed: return "'\(LogSafe.name(group))' (skipped, see above)"
            }
        }
        guard !missing.isEmpty else { return }
        throw StartError(
            description:
                "--seed-strict: \(missing.count) group(s) of '\(LogSafe.name(seed))' not published: "
                + missing.joined(separator: ", "))
    }

    /// Runs a start-up step that starts a thread; a thread that cannot start stops the start.
    private static func starting<T>(_ what: String, _ step: () throws(ThreadStartError) -> T) throws(StartError) -> T {
        do { return try step() } catch { throw StartError(description: "cannot start \(what): \(error)") }
    }

    /// The port it listens on.
    var port: UInt16 { daemon.port }

    /// The base URL, for the startup line and tests.
    var baseURL: String {
        let host = options.transport.host.contains(":") ? "[\(options.transport.host)]" : options.transport.host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, answers parked requests, lets requests in flight (publishes above all)
    /// finish for up to `timeoutSeconds`, then stops the daemon.
    func shutdown(timeoutSeconds: Int) {
        guard !shutDown.exchange(true, ordering: .relaxed) else { return }
        daemon.stopAccepting()
        // Emptied now: a wake a publish deferred past its answer (`AfterAnswer`) may still run
        // after the wait below, and finds nobody left to resume.
        waiters.stop()
        faultLab?.stopHolding()
        daemon.wakeAllSuspended()
        let timeout = Int64(timeoutSeconds) * 1_000_000_000
        let deadline = MonotonicClock.nanos() + timeout
        // What comes after the wait (closing connections, stopping the daemon's threads) takes
        // up to about 100 ms with stalled readers: the wait ends early enough for the whole
        // shutdown to keep to its timeout.
        let waitDeadline = deadline - min(500_000_000, timeout / 10)
        while daemon.requestsInFlight > 0, MonotonicClock.nanos() < waitDeadline {
            // A keep-alive client may send another waiting request meanwhile: the waiters answer
            // it at once now, and anything that still slipped into suspension is woken again.
            daemon.wakeAllSuspended()
            usleep(10_000)
        }
        faultLab?.waitForPublishes(until: waitDeadline)
        watcher?.stop(until: waitDeadline)
        pool.stop()
        diagnostics.stop()
        images.stop()
        daemon.wakeAllSuspended()
        daemon.abandonDeferred()
        // Resumed connections are answered by the daemon's threads before they stop.
        usleep(20_000)
        daemon.stop()
        broadcaster.removeAll()
        cache.empty()
    }
}
