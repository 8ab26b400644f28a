import FeedImaging
import FeedStore
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
    private let pool: WorkPool
    private let faultLab: FaultLab?
    /// `--watch`: the seed folder's watcher.
    private let watcher: SeedWatcher?
    let daemon: HTTPDaemon
    private let shutDown = Atomic<Bool>(false)
    /// The options it was started with.
    let options: ServerOptions

    /// Prepares the root, builds the routes and starts listening.
    init(options: ServerOptions) throws {
        self.options = options
        // One limit for writing and reading a feed.json (payload plus envelope).
        let configuration = FeedStoreConfiguration(keepPrevious: options.keepPrevious, gracePeriodMs: Int64(options.graceSeconds) * 1000,
                                                   maxFeedBytes: options.maxPayloadBytes)
        let broadcaster = PublishBroadcaster()
        let store = FeedStore(root: options.root, configuration: configuration, notifier: broadcaster)
        do {
            try store.prepareRoot()
        } catch {
            throw StartError(description: "root folder '\(options.root)' cannot be created or written: \(error)")
        }
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
        let threads = options.threads > 0 ? options.threads : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let metrics = Metrics()
        self.metrics = metrics
        // Publishes prepare their images on every core themselves; two workers keep a DELETE or
        // a listing from queueing behind one long photo publish.
        let pool = WorkPool(threads: max(2, threads), queueLimit: 1024)
        self.pool = pool
        let cache = FeedResponseCache(store: store)
        let waiters = Waiters(cache: cache, metrics: metrics, capacity: options.maxWaiters)
        self.waiters = waiters
        // Weak: the store holds the broadcaster and the waiters hold the store (through the
        // cache), so a strong capture would keep every part of a stopped server alive.
        broadcaster.add { [weak waiters] in waiters?.feedChanged(group: $0.group) }
        if let command = options.onPublish {
            let hook = PublishHook(command: command)
            broadcaster.add { hook.run(for: $0) }
        }
        let feeds = FeedRoutes(store: store, cache: cache, encoder: encoder, imagingThreads: threads, metrics: metrics, waiters: waiters,
                               maxBodyBytes: options.maxBodyBytes, lint: FeedLint(androidScreen: options.androidScreen))
        // --seed: every group published before the first request; --watch follows edits.
        var watcher: SeedWatcher?
        if let seed = options.seed {
            let seeds = SeedPublisher(folder: SeedFolder(path: seed), store: store, encoder: encoder, threads: threads,
                                      maxAssets: options.maxParts, maxAssetBytes: options.maxBodyBytes)
            if options.watch { watcher = try SeedWatcher(publisher: seeds) }
            // On a lowered thread: the libvips workers it starts stay for later publishes.
            let seeded = ThreadPriority.runLowered { () -> Result<Void, SeedError> in
                Result { () throws(SeedError) in try seeds.publishAll() }
            }
            if case .failure(let error) = seeded {
                throw StartError(description: "--seed '\(seed)': \(error.description)")
            }
        }
        self.watcher = watcher
        let faultLab = options.faultLab ? FaultLab() : nil
        self.faultLab = faultLab
        let faults = FaultRoutes(store: store, lab: faultLab, metrics: metrics)
        let rotation = RotationRoutes(store: store, cache: cache, clock: SystemClock())
        let archives = ArchiveRoutes(feeds: feeds, uploads: uploads, maxEntries: options.maxParts)
        let assets = AssetRoutes(store: store)
        let router = Router(routes: feeds.routes + [archives.route] + faults.routes + rotation.routes + [assets.route] + OperationsRoutes(metrics: metrics).routes + PreviewRoutes().routes)
        metrics.register(routes: router.routes.map(\.name))
        let authorization = Authorization(writeToken: options.token, readToken: options.readToken,
                                          alsoOpen: options.faultLab ? [] : [FaultRoutes.template])
        let shortcut = CachedReadShortcut(feeds: cache, assets: assets, metrics: metrics, router: router, authorization: authorization)
        let pipeline = RequestPipeline(
            router: router,
            authorization: authorization,
            cors: options.corsOrigin.map(CORSPolicy.init(origin:)),
            metrics: metrics,
            pool: pool)
        var settings = DaemonSettings()
        settings.host = options.host
        settings.port = options.port
        settings.threads = threads
        settings.maxParts = options.maxParts
        settings.connectionTimeoutSeconds = options.connectionTimeoutSeconds
        settings.maxConnections = options.maxConnections
        settings.maxBodyBytes = options.maxBodyBytes
        settings.maxPayloadBytes = options.maxPayloadBytes
        settings.headerTimeoutSeconds = options.headerTimeoutSeconds
        settings.minBodyBytesPerSecond = options.minBodyBytesPerSecond
        settings.maxConnectionsPerIP = options.maxConnectionsPerIP
        settings.maxInflightBytes = options.maxInflightBytes
        settings.notModifiedStatesLength = options.notModifiedStatesLength
        settings.uploads = uploads
        do {
            daemon = try HTTPDaemon(settings: settings, log: AccessLog(enabled: options.accessLog),
                                    admitBody: { pipeline.admitBody($0, declaredLength: $1) },
                                    preparedAnswers: shortcut.map(Self.preparedAnswers),
                                    countAnswer: { [metrics] method, status, bytes in
                                        // Answered by the HTTP layer itself: no route decided it.
                                        metrics.recordRequest(route: -1, method: method, status: status, bytes: bytes)
                                    }) { pipeline.respond(to: $0) }
        } catch {
            throw StartError(description: "\(error)")
        }
        watcher?.start()
    }

    /// The daemon's hook for `shortcut`.
    private static func preparedAnswers(_ shortcut: CachedReadShortcut) -> PreparedAnswers {
        { shortcut.answer($0) }
    }

    /// The port it listens on.
    var port: UInt16 { daemon.port }

    /// The base URL, for the startup line and tests.
    var baseURL: String {
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, answers parked requests, lets requests in flight (publishes above all) finish for up to `timeout`
    /// seconds, then stops the daemon.
    func shutdown(timeoutSeconds: Int) {
        guard !shutDown.exchange(true, ordering: .relaxed) else { return }
        daemon.stopAccepting()
        waiters.stop()
        faultLab?.stopHolding()
        daemon.wakeAllSuspended()
        let deadline = MonotonicClock.nanos() + Int64(timeoutSeconds) * 1_000_000_000
        while daemon.requestsInFlight > 0, MonotonicClock.nanos() < deadline {
            // A keep-alive client may send another waiting request meanwhile: the waiters answer
            // it at once now, and anything that still slipped into suspension is woken again.
            daemon.wakeAllSuspended()
            usleep(10_000)
        }
        faultLab?.waitForPublishes(until: deadline)
        watcher?.stop()
        pool.stop()
        daemon.wakeAllSuspended()
        daemon.abandonDeferred()
        // Resumed connections are answered by the daemon's threads before they stop.
        usleep(20_000)
        daemon.stop()
    }
}
