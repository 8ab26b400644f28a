import FeedStore
import HTTPTransport

/// Everything the command line and environment configure.
struct ServerOptions: Sendable, Equatable {
    /// Sockets, body limits and deadlines: the transport's settings, its defaults included.
    var transport = TransportSettings()
    var root = "./data"
    var keepPrevious = 1
    var graceSeconds = 60
    var maxImagePixels = 40_000_000
    var maxWaiters = 512
    /// `--read-cache-bytes`: the most bytes of rendered reads kept in memory.
    var readCacheBytes = FeedResponseCache.defaultBudgetBytes
    var shutdownTimeoutSeconds = 10
    var token: String?
    var readToken: String?
    var corsOrigin: String?
    var onPublish: String?
    /// Seconds a hook run may take before its process group is killed.
    var onPublishTimeoutSeconds = 120
    var androidScreen = PlatformLimits.defaultAndroidScreen
    var faultLab = false
    /// `--seed DIR`: a folder of groups published at start.
    var seed: String?
    /// `--watch`: republish seed groups when their files change.
    var watch = false
    /// `--seed-strict`: seed groups with platform-limit warnings are refused; at start, any group
    /// not published stops the start.
    var seedStrict = false
    /// `--journal`: record every write in `<root>/.feed-server-journal` (default on).
    var journal = true
    /// `--ios-reload-budget`: WidgetKit reloads a widget gets per rolling 24 hours, as modelled.
    var iosReloadBudget = ReloadLedger.defaultIOSBudget

    /// `--max-payload-bytes`: the largest feed.json (payload and envelope) written or read, which
    /// is also the most the transport keeps in memory of a multipart body (the payload part).
    var maxPayloadBytes: Int {
        get { transport.maxMemoryPartBytes }
        set { transport.maxMemoryPartBytes = newValue }
    }

    static let version = "0.1.0"

    /// The store's retention and limits; one limit for writing and reading a feed.json (payload
    /// plus envelope). The server and the store commands configure their stores alike.
    var storeConfiguration: FeedStoreConfiguration {
        FeedStoreConfiguration(
            keepPrevious: keepPrevious, gracePeriodMs: Int64(graceSeconds) * 1000, maxFeedBytes: maxPayloadBytes)
    }

    /// What the command line asks for.
    enum Command: Equatable {
        case run(ServerOptions)
        case help
        case version
    }

    /// A command-line mistake, reported with exit status 2.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// One option: flag, environment variable, help text, and how to apply a value.
    private struct Option: Sendable {
        let flag: String
        let environment: String
        let placeholder: String
        let help: String
        /// A switch (`--fault-lab`) means "on" without a value; `--fault-lab=off` still works.
        var isSwitch = false
        /// Whether a separate value may start with `--`: only a secret's text is that free.
        var takesDashedValue = false
        let apply: @Sendable (inout ServerOptions, String) throws -> Void

        /// Applies `value`; every entry throws only usage errors, though its closure is untyped.
        func apply(_ value: String, to options: inout ServerOptions) throws(UsageError) {
            do { try apply(&options, value) } catch {
                throw error as? UsageError ?? UsageError(description: "\(flag): \(error)")
            }
        }
    }

    /// The transport's defaults, named in the help text.
    private static let transportDefaults = TransportSettings()

    private static let options: [Option] = [
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
            help: "HTTP worker threads (default: one per CPU core)"
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
                "most bytes of rendered feed reads kept in memory; a feed larger than this is read from disk each time "
                + "(default \(FeedResponseCache.defaultBudgetBytes))"
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
            flag: "--shutdown-timeout", environment: "FEED_SERVER_SHUTDOWN_TIMEOUT", placeholder: "S",
            help: "on SIGINT/SIGTERM, wait up to S s for requests in flight (default 10)"
        ) { $0.shutdownTimeoutSeconds = try integer($1, "--shutdown-timeout", 0...3600) },
    ]

    /// Parses arguments (without the program name); environment variables fill in what flags
    /// leave out, and an empty variable counts as unset.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
        var result = ServerOptions()
        try result.apply(environment: environment)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--help" || argument == "-h" { return .help }
            if argument == "--version" { return .version }
            guard try result.apply(arguments, at: &index) else {
                throw UsageError(description: "unknown option '\(argument)' (see --help)")
            }
        }
        if result.watch, result.seed == nil { throw UsageError(description: "--watch needs --seed DIR") }
        if result.seedStrict, result.seed == nil { throw UsageError(description: "--seed-strict needs --seed DIR") }
        return .run(result)
    }

    /// Applies the environment variables of the options `flags` names (nil: every option).
    mutating func apply(environment: [String: String], flags: Set<String>? = nil) throws(UsageError) {
        for option in Self.options where flags?.contains(option.flag) ?? true {
            // An empty variable counts as unset: compose files and CI templates pass `VAR=` for
            // "not configured", and refusing to start on it helps nobody.
            guard let value = environment[option.environment], !value.isEmpty else { continue }
            do { try option.apply(value, to: &self) } catch {
                // Each option's message names its flag; the variable is what was set here.
                let text = error.description
                throw UsageError(
                    description: text.hasPrefix(option.flag)
                        ? option.environment + text.dropFirst(option.flag.count) : "\(option.environment): \(text)")
            }
        }
    }

    /// Applies the option at `arguments[index]` when it is one of `flags` (nil: every option),
    /// and moves `index` past it and its value; false, `index` unmoved, for any other argument.
    mutating func apply(
        _ arguments: [String], at index: inout Int, flags: Set<String>? = nil
    ) throws(UsageError) -> Bool {
        let (flag, inlineValue) = Self.splitFlag(arguments[index])
        guard let option = Self.options.first(where: { $0.flag == flag }), flags?.contains(flag) ?? true else {
            return false
        }
        let value = try Self.value(
            of: flag, inline: inlineValue, isSwitch: option.isSwitch, takesDashedValue: option.takesDashedValue,
            arguments: arguments, index: &index)
        try option.apply(value, to: &self)
        index += 1
        return true
    }

    /// The value of the option at `arguments[index]`: its inline `=` text, "on" for a bare
    /// switch, or the next argument (`index` moved onto it). A next argument that starts with
    /// `--` is a forgotten value, not the value, unless `takesDashedValue`: `--port --root x`
    /// would otherwise set the port to `--root` and call `x` an unknown option.
    static func value(
        of flag: String, inline: String?, isSwitch: Bool, takesDashedValue: Bool, arguments: [String],
        index: inout Int
    ) throws(UsageError) -> String {
        if let inline { return inline }
        if isSwitch { return "on" }
        guard index + 1 < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
        let next = arguments[index + 1]
        if next.hasPrefix("--"), !takesDashedValue {
            throw UsageError(
                description:
                    "\(flag) needs a value (it is followed by the option '\(next)'; write \(flag)=VALUE for a value "
                    + "that starts with --)")
        }
        index += 1
        return next
    }

    /// One help line per option `flags` names (nil: every option), with its variable.
    static func optionLines(flags: Set<String>? = nil) -> [String] {
        options.filter { flags?.contains($0.flag) ?? true }.map { option in
            "  \(option.flag) \(option.placeholder)".padding(to: 32) + "\(option.help) [\(option.environment)]"
        }
    }

    static func splitFlag(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    static func integer(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                description:
                    "\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
        }
        return value
    }

    private static func nonEmpty(_ text: String, _ flag: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError(description: "\(flag) must not be empty") }
        return text
    }

    /// A token a client can send: visible ASCII only. A header value loses its surrounding
    /// blanks on the way in, so a token made of (or padded with) blanks could never match and
    /// would lock every client out.
    private static func secret(_ text: String, _ flag: String) throws(UsageError) -> String {
        let token = try nonEmpty(text, flag)
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw UsageError(
                description:
                    "\(flag) must be visible ASCII characters only, no blanks or control characters (a client could "
                    + "never send it)"
            )
        }
        return token
    }

    static func boolean(_ text: String, _ flag: String) throws(UsageError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default: throw UsageError(description: "\(flag) must be on or off (got '\(text)')")
        }
    }
}
