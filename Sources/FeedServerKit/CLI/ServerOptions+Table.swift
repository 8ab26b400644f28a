import FeedStore
import HTTPTransport

/// The table of every option: its flag, environment variable, help text and how it applies.
extension ServerOptions {
    /// The transport's defaults, named in the help text.
    private static let transportDefaults = TransportSettings()

    static let options: [Option] = [
        Option(
            flag: "--host", environment: "FEED_SERVER_HOST", placeholder: "ADDRESS",
            help: "address to listen on (default \(transportDefaults.host); 0.0.0.0 for all)"
        ) { $0.transport.host = $1 },
        Option(
            flag: "--port", environment: "FEED_SERVER_PORT", placeholder: "N",
            help: "TCP port, 0 for any free port (default \(transportDefaults.port))"
        ) { $0.transport.port = UInt16(try integer($1, "--port", 0...65535)) },
        Option(
            flag: "--root", environment: "FEED_SERVER_ROOT", placeholder: "DIR",
            help: "folder holding one sub-folder per feed group (default ./data)"
        ) { $0.root = $1 },
        Option(
            flag: "--keep-previous", environment: "FEED_SERVER_KEEP_PREVIOUS", placeholder: "N",
            help: "older generations kept for fallback (default 1)"
        ) { $0.keepPrevious = try integer($1, "--keep-previous", 0...1000) },
        Option(
            flag: "--grace-seconds", environment: "FEED_SERVER_GRACE_SECONDS", placeholder: "N",
            help: "never delete a generation retired less than N s ago (default 60)"
        ) { $0.graceSeconds = try integer($1, "--grace-seconds", 0...86_400 * 365) },
        Option(
            flag: "--threads", environment: "FEED_SERVER_THREADS", placeholder: "N",
            help: "HTTP worker threads, and threads preparing a publish's images (default: one per CPU core)"
        ) { $0.transport.threads = try integer($1, "--threads", 1...1024) },
        Option(
            flag: "--max-body-bytes", environment: "FEED_SERVER_MAX_BODY_BYTES", placeholder: "N",
            help: "largest request body, images included; larger gets 413 (default \(transportDefaults.maxBodyBytes))"
        ) { $0.transport.maxBodyBytes = try integer($1, "--max-body-bytes", 1...(1 << 40)) },
        Option(
            flag: "--max-payload-bytes", environment: "FEED_SERVER_MAX_PAYLOAD_BYTES", placeholder: "N",
            help:
                "largest feed.json (payload + envelope), for writing and reading; larger publishes get 413 (default "
                + "\(transportDefaults.maxMemoryPartBytes))"
        ) { $0.maxPayloadBytes = try integer($1, "--max-payload-bytes", 1...(1 << 32)) },
        Option(
            flag: "--max-parts", environment: "FEED_SERVER_MAX_PARTS", placeholder: "N",
            help: "most parts in a multipart publish; more gets 413 (default \(transportDefaults.maxParts))"
        ) { $0.transport.maxParts = try integer($1, "--max-parts", 1...100_000) },
        Option(
            flag: "--max-image-pixels", environment: "FEED_SERVER_MAX_IMAGE_PIXELS", placeholder: "N",
            help: "refuse images with more pixels, from their header (default 40000000)"
        ) { $0.maxImagePixels = try integer($1, "--max-image-pixels", 1...(1 << 40)) },
        Option(
            flag: "--connection-timeout", environment: "FEED_SERVER_CONNECTION_TIMEOUT", placeholder: "S",
            help: "close connections idle for S seconds (default \(transportDefaults.connectionTimeoutSeconds))"
        ) { $0.transport.connectionTimeoutSeconds = try integer($1, "--connection-timeout", 1...86_400) },
        Option(
            flag: "--header-timeout", environment: "FEED_SERVER_HEADER_TIMEOUT", placeholder: "S",
            help:
                "close a connection whose request head has not arrived S s after it opened or after its last "
                + "answer; 0 turns this and --min-body-rate off (default \(transportDefaults.headerTimeoutSeconds))"
        ) { $0.transport.headerTimeoutSeconds = try integer($1, "--header-timeout", 0...3600) },
        Option(
            flag: "--min-body-rate", environment: "FEED_SERVER_MIN_BODY_RATE", placeholder: "BYTES",
            help:
                "a request body must bring BYTES per second or more over every --header-timeout seconds of it; 0 "
                + "for no minimum (default \(transportDefaults.minBodyBytesPerSecond))"
        ) { $0.transport.minBodyBytesPerSecond = try integer($1, "--min-body-rate", 0...(1 << 30)) },
        Option(
            flag: "--max-connections-per-ip", environment: "FEED_SERVER_MAX_CONNECTIONS_PER_IP", placeholder: "N",
            help: "most connections from one IP address; 0 for no limit (default 0: every local client is 127.0.0.1)"
        ) { $0.transport.maxConnectionsPerIP = try integer($1, "--max-connections-per-ip", 0...100_000) },
        Option(
            flag: "--read-cache-bytes", environment: "FEED_SERVER_READ_CACHE_BYTES", placeholder: "N",
            help:
                "most bytes of rendered feed reads kept in memory; a feed larger than this is read from disk each time; "
                + "bodies let go that slow readers still hold are bounded by half as many (at least 16 MiB; a read "
                + "needing a new render beyond gets 503) (default \(FeedResponseCache.defaultBudgetBytes))"
        ) { $0.readCacheBytes = try integer($1, "--read-cache-bytes", 0...(1 << 40)) },
        Option(
            flag: "--max-waiters", environment: "FEED_SERVER_MAX_WAITERS", placeholder: "N",
            help: "most parked long-polls and event streams together; more get 503 (default 512)"
        ) { $0.maxWaiters = try integer($1, "--max-waiters", 1...100_000) },
        Option(
            flag: "--max-inflight-bytes", environment: "FEED_SERVER_MAX_INFLIGHT_BYTES", placeholder: "N",
            help:
                "most request-body bytes of all uploads in progress together; more get 503 with Retry-After "
                + "(default \(transportDefaults.maxInflightBytes))"
        ) { $0.transport.maxInflightBytes = try integer($1, "--max-inflight-bytes", 1...(1 << 42)) },
        Option(
            flag: "--max-memory-body-bytes", environment: "FEED_SERVER_MAX_MEMORY_BODY_BYTES", placeholder: "N",
            help:
                "most memory held by request bodies kept in memory (JSON bodies, payload parts) of all requests "
                + "together, each byte counted three times (the byte, its parsed form, the feed written) as it arrives, "
                + "and each [ { , : character 6 bytes more before the payload is parsed (archive payloads too); more "
                + "get 503 with Retry-After, except a publish while others hold an eighth or less; never below three "
                + "times --max-payload-bytes "
                + "(default \(transportDefaults.maxMemoryBodyBytes))"
        ) { $0.transport.maxMemoryBodyBytes = try integer($1, "--max-memory-body-bytes", 1...(1 << 42)) },
        Option(
            flag: "--max-connections", environment: "FEED_SERVER_MAX_CONNECTIONS", placeholder: "N",
            help: "most concurrent connections (default \(transportDefaults.maxConnections))"
        ) { $0.transport.maxConnections = try integer($1, "--max-connections", 1...100_000) },
        Option(
            flag: "--access-log", environment: "FEED_SERVER_ACCESS_LOG", placeholder: "on|off",
            help: "one line per request on stderr (default on)"
        ) { $0.transport.accessLog = try boolean($1, "--access-log") },
        Option(
            flag: "--not-modified-length", environment: "FEED_SERVER_NOT_MODIFIED_LENGTH",
            placeholder: "representation|zero",
            help:
                "Content-Length of a 304: 0 (default: OkHttp, HttpURLConnection on Android and wrk wait for that "
                + "many body bytes after a 304), or representation, the length of the 200 it stands for (RFC 9110)"
        ) {
            switch $1.lowercased() {
            case "representation": $0.transport.notModifiedStatesLength = true
            case "zero": $0.transport.notModifiedStatesLength = false
            default: throw UsageError(description: "--not-modified-length must be representation or zero (got '\($1)')")
            }
        },
        Option(
            flag: "--token", environment: "FEED_SERVER_TOKEN", placeholder: "SECRET",
            help: "PUT and DELETE need Authorization: Bearer SECRET (401 otherwise)", takesDashedValue: true
        ) { $0.token = try secret($1, "--token") },
        Option(
            flag: "--read-token", environment: "FEED_SERVER_READ_TOKEN", placeholder: "SECRET",
            help:
                "reads need Bearer SECRET (or the write token); without --token, writes need it too; /healthz and "
                + "the preview pages stay open; the event stream and long-poll also take ?access_token=SECRET",
            takesDashedValue: true
        ) { $0.readToken = try secret($1, "--read-token") },
        Option(
            flag: "--cors-origin", environment: "FEED_SERVER_CORS_ORIGIN", placeholder: "ORIGINS",
            help:
                "allow pages from these origins to call the API: scheme://host[:port] (http or https), several "
                + "separated by commas (each answer then names the request's own, with Vary: Origin), or * for any "
                + "(default: off)"
        ) {
            do { _ = try CORSPolicy(parsing: $1) } catch { throw UsageError(description: "--cors-origin: \(error)") }
            $0.corsOrigin = $1
        },
        Option(
            flag: "--on-publish", environment: "FEED_SERVER_ON_PUBLISH", placeholder: "COMMAND",
            help:
                "run COMMAND with /bin/sh after each change to a feed: a publish, a DELETE, a fault (FEED_EVENT, "
                + "FEED_GROUP, FEED_GROUP_DIR, FEED_GENERATION_ID, FEED_FINGERPRINT, FEED_DIR, FEED_FAULT; "
                + "coalesced per group)"
        ) { $0.onPublish = try nonEmpty($1, "--on-publish") },
        Option(
            flag: "--on-publish-timeout", environment: "FEED_SERVER_ON_PUBLISH_TIMEOUT", placeholder: "S",
            help: "kill a hook run (its whole process group) that takes longer than S s (default 120)"
        ) { $0.onPublishTimeoutSeconds = try integer($1, "--on-publish-timeout", 1...86_400) },
        Option(
            flag: "--android-screen", environment: "FEED_SERVER_ANDROID_SCREEN", placeholder: "WxH",
            help:
                "Android screen in pixels whose bitmap budget (W × H × 4 × 1.5) publishes are checked against "
                + "(default 1080x2400)"
        ) {
            guard let screen = ScreenSize(parsing: $1) else {
                throw UsageError(
                    description: "--android-screen must be WIDTHxHEIGHT in pixels, each 1 to 100000 (got '\($1)')")
            }
            $0.androidScreen = screen
        },
        Option(
            flag: "--fault-lab", environment: "FEED_SERVER_FAULT_LAB", placeholder: "",
            help:
                "enable POST /feeds/{group}/faults, which writes broken states on purpose to test widget fallback "
                + "(default off)",
            isSwitch: true
        ) { $0.faultLab = try boolean($1, "--fault-lab") },
        Option(
            flag: "--seed", environment: "FEED_SERVER_SEED", placeholder: "DIR",
            help:
                "publish every group folder of DIR at start (DIR/<group>/payload.json, optional meta.json "
                + "{\"schemaVersion\":N} and assets/); unchanged groups write nothing, a broken one is logged "
                + "and skipped"
        ) { $0.seed = try nonEmpty($1, "--seed") },
        Option(
            flag: "--watch", environment: "FEED_SERVER_WATCH", placeholder: "",
            help:
                "with --seed: republish a group when its files change (inotify, 200 ms debounce); a broken edit is "
                + "logged and the last good feed stays served (default off)",
            isSwitch: true
        ) { $0.watch = try boolean($1, "--watch") },
        Option(
            flag: "--seed-strict", environment: "FEED_SERVER_SEED_STRICT", placeholder: "",
            help:
                "with --seed: refuse a group with platform-limit warnings (logged, not published); at start, a "
                + "group refused or skipped makes the server exit with status 2 (default off)",
            isSwitch: true
        ) { $0.seedStrict = try boolean($1, "--seed-strict") },
        Option(
            flag: "--journal", environment: "FEED_SERVER_JOURNAL", placeholder: "on|off",
            help:
                "record every write (publish, restore, delete, fault, profile, seed) in ROOT/.feed-server-journal for "
                + "GET /journal and POST /journal/verify (default on)"
        ) { $0.journal = try boolean($1, "--journal") },
        Option(
            flag: "--ios-reload-budget", environment: "FEED_SERVER_IOS_RELOAD_BUDGET", placeholder: "N",
            help: "reloads WidgetKit grants a widget per rolling 24 h in GET /feeds/{group}/refreshes (default 40)"
        ) { $0.iosReloadBudget = try integer($1, "--ios-reload-budget", 1...10_000) },
        Option(
            flag: "--recent-requests", environment: "FEED_SERVER_RECENT_REQUESTS", placeholder: "N",
            help:
                "keep the last N requests in memory for GET /journal/reads, 0 for none (default "
                + "\(RecentRequests.defaultCapacity), at most \(RecentRequests.maxCapacity))"
        ) { $0.recentRequests = try integer($1, "--recent-requests", 0...RecentRequests.maxCapacity) },
        Option(
            flag: "--shutdown-timeout", environment: "FEED_SERVER_SHUTDOWN_TIMEOUT", placeholder: "S",
            help: "on SIGINT/SIGTERM, wait up to S s for requests in flight (default 10)"
        ) { $0.shutdownTimeoutSeconds = try integer($1, "--shutdown-timeout", 0...3600) },
    ]
}
