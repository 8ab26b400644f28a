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
    /// `--recent-requests`: how many answered requests `GET /journal/reads` lists.
    var recentRequests = RecentRequests.defaultCapacity

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
    struct Option: Sendable {
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

    static func nonEmpty(_ text: String, _ flag: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError(description: "\(flag) must not be empty") }
        return text
    }

    /// A token a client can send: visible ASCII only. A header value loses its surrounding
    /// blanks on the way in, so a token made of (or padded with) blanks could never match and
    /// would lock every client out.
    static func secret(_ text: String, _ flag: String) throws(UsageError) -> String {
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
