import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counters and a latency histogram, rendered in the Prometheus text format (0.0.4) at `/metrics`.
final class Metrics: Sendable {
    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Histogram {
        static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
        var counts = [Int](repeating: 0, count: bounds.count)
        var sum = 0.0
        var count = 0

        mutating func observe(_ seconds: Double) {
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { counts[index] += 1 }
            sum += seconds
            count += 1
        }
    }

    private let publishLatency = Lock(Histogram())
    private let bytesServed = Atomic<Int>(0)
    private let published = Atomic<Int>(0)
    private let unchanged = Atomic<Int>(0)
    private let fallbacksServed = Atomic<Int>(0)
    private let preparedAnswers = Atomic<Int>(0)
    /// Long-poll and event-stream clients waiting now (none until live updates exist).
    let openWaiters = Atomic<Int>(0)
    /// Slow requests being handled on the work pool right now.
    let workInProgress = Atomic<Int>(0)
    /// The memory budget of bodies and parses (`--max-memory-body-bytes`), shown as a gauge.
    let memoryBudget: InflightBudget?

    /// Metrics that show `memoryBudget` (nil: no such gauge).
    init(memoryBudget: InflightBudget? = nil) { self.memoryBudget = memoryBudget }

    /// Publish warnings by `LintCode` (index in `allCases`), fault-lab injections by `FaultKind`.
    private let warnings = Lock([Int](repeating: 0, count: LintCode.allCases.count))
    private let faults = Lock([Int](repeating: 0, count: FaultKind.allCases.count))

    private let counts = RequestCounters()
    private let names = Lock<[String]>([])

    /// Counts a finished request by route template, method and status, and its body bytes.
    /// (This runs on every request: no lock, no allocation, see `RequestCounters`.)
    func recordRequest(route: Int, method: String, status: Int, bytes: Int) {
        counts.add(route: route, method: Self.methodCode(method), status: status)
        bytesServed.add(bytes, ordering: .relaxed)
    }

    /// Registers the route templates; `recordRequest` refers to them by position (-1: unmatched).
    func register(routes: [String]) { names.withLock { $0 = routes } }

    private static let methods = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "POST", "PATCH"]
    private static func methodCode(_ method: String) -> Int {
        // The common methods by their bytes: comparing Strings would cost more than the count.
        var method = method
        return method.withUTF8 { bytes in
            switch (bytes.count, bytes.first) {
            case (3, UInt8(ascii: "G")) where bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "T"): return 0
            case (4, UInt8(ascii: "H")) where bytes.elementsEqual("HEAD".utf8): return 1
            case (3, UInt8(ascii: "P")) where bytes[1] == UInt8(ascii: "U") && bytes[2] == UInt8(ascii: "T"): return 2
            default: return methods.firstIndex { $0.utf8.elementsEqual(bytes) } ?? methods.count
            }
        }
    }

    private func requestCounts() -> [RequestKey: Int] {
        let routeNames = names.withLock { $0 }
        var result: [RequestKey: Int] = [:]
        for (key, count) in counts.totals() {
            result[
                RequestKey(
                    route: key.route >= 0 && key.route < routeNames.count ? routeNames[key.route] : "unmatched",
                    method: key.method < Self.methods.count ? Self.methods[key.method] : "other", status: key.status),
                default: 0] += count
        }
        return result
    }

    /// Records a publish's duration and outcome.
    func recordPublish(seconds: Double, changed: Bool) {
        publishLatency.withLock { $0.observe(seconds) }
        if changed {
            published.add(1, ordering: .relaxed)
        } else {
            unchanged.add(1, ordering: .relaxed)
        }
    }

    /// Counts the warnings of one publish answer (201, 200, or 422 under `lint=strict`).
    func recordWarnings(_ report: LintReport) {
        guard !report.isEmpty else { return }
        warnings.withLock { counts in
            for (code, count) in report.counts {
                if let index = LintCode.allCases.firstIndex(of: code) {
                    counts[index] =
                        counts[index].addingReportingOverflow(count).overflow ? .max : counts[index] &+ count
                }
            }
        }
    }

    /// Counts one fault-lab injection.
    func recordFault(_ kind: FaultKind) {
        guard let index = FaultKind.allCases.firstIndex(of: kind) else { return }
        faults.withLock { $0[index] += 1 }
    }

    /// Counts a read answered with a fallback generation.
    func recordFallbackServed() { fallbacksServed.add(1, ordering: .relaxed) }

    /// Counts a cached read answered before routing, from its prepared response (also counted
    /// by `recordRequest`).
    func recordPreparedAnswer() { preparedAnswers.add(1, ordering: .relaxed) }

    /// The exposition text.
    func render() -> String {
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }
        family("feedserver_http_requests_total", "counter", "HTTP requests by route template, method and status.")
        for (key, count) in requestCounts().sorted(by: {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }) {
            let labels = "route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\""
            lines.append("feedserver_http_requests_total{\(labels)} \(count)")
        }
        family(
            "feedserver_http_response_body_bytes_total", "counter",
            "Response body bytes sent (HEAD counts the bytes a GET would send).")
        lines.append("feedserver_http_response_body_bytes_total \(bytesServed.load(ordering: .relaxed))")
        family("feedserver_publishes_total", "counter", "Publishes by result.")
        lines.append("feedserver_publishes_total{result=\"published\"} \(published.load(ordering: .relaxed))")
        lines.append("feedserver_publishes_total{result=\"unchanged\"} \(unchanged.load(ordering: .relaxed))")
        family(
            "feedserver_publish_duration_seconds", "histogram",
            "Time to publish (canonicalise, encode images, write durably).")
        let histogram = publishLatency.withLock { $0 }
        for (index, bound) in Histogram.bounds.enumerated() {
            lines.append("feedserver_publish_duration_seconds_bucket{le=\"\(bound)\"} \(histogram.counts[index])")
        }
        lines.append("feedserver_publish_duration_seconds_bucket{le=\"+Inf\"} \(histogram.count)")
        lines.append("feedserver_publish_duration_seconds_sum \(histogram.sum)")
        lines.append("feedserver_publish_duration_seconds_count \(histogram.count)")
        family(
            "feedserver_publish_warnings_total", "counter",
            "Platform-limit and asset warnings in publish answers, by code (docs/widget-limits.md).")
        for (code, count) in zip(LintCode.allCases, warnings.withLock { $0 }) {
            lines.append("feedserver_publish_warnings_total{code=\"\(code.rawValue)\"} \(count)")
        }
        family(
            "feedserver_faults_injected_total", "counter",
            "Broken states written by the fault lab (--fault-lab), by kind.")
        for (kind, count) in zip(FaultKind.allCases, faults.withLock { $0 }) {
            lines.append("feedserver_faults_injected_total{kind=\"\(kind.rawValue)\"} \(count)")
        }
        family(
            "feedserver_fallbacks_served_total", "counter",
            "Reads answered with a generation other than the pointer's current one.")
        lines.append("feedserver_fallbacks_served_total \(fallbacksServed.load(ordering: .relaxed))")
        family(
            "feedserver_http_prepared_answers_total", "counter",
            "Cached reads (feeds and assets) answered before routing, from a prepared response; also in "
                + "feedserver_http_requests_total."
        )
        lines.append("feedserver_http_prepared_answers_total \(preparedAnswers.load(ordering: .relaxed))")
        family("feedserver_open_waiters", "gauge", "Clients waiting for a change (long-poll, event streams).")
        lines.append("feedserver_open_waiters \(openWaiters.load(ordering: .relaxed))")
        family(
            "feedserver_work_in_progress", "gauge",
            "Slow requests (publishes, DELETE, listings) running on the work pool.")
        lines.append("feedserver_work_in_progress \(workInProgress.load(ordering: .relaxed))")
        if let memoryBudget {
            family(
                "feedserver_memory_budget_bytes", "gauge",
                "Bytes of --max-memory-body-bytes counted now: bodies kept in memory and the payloads being parsed.")
            lines.append("feedserver_memory_budget_bytes \(memoryBudget.inUse)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Request counts by route, method and status without a lock: a table of relaxed atomic counters
/// per stripe, each thread counting in the stripe its thread id hashes to (libmicrohttpd's few
/// worker threads rarely share one, so counting does not bounce a cache line between cores),
/// summed when `/metrics` is scraped. Statuses outside `statuses` and routes past `maxRoutes`
/// are counted under a lock instead (they are rare).
final class RequestCounters: @unchecked Sendable {
    /// The statuses with a counter of their own.
    static let statuses = [
        200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414,
        415, 416, 417, 422, 428, 429, 431, 500, 501, 503, 505,
    ]
    /// Most routes with counters of their own (the route table has about 20).
    static let maxRoutes = 63
    private static let methodCount = 8
    private static let stripeCount = 4
    /// Status → its position in `statuses`, or -1.
    private static let statusIndex: [Int8] = {
        var table = [Int8](repeating: -1, count: 600)
        for (index, status) in statuses.enumerated() { table[status] = Int8(index) }
        return table
    }()
    private static let slotsPerStripe = (maxRoutes + 1) * methodCount * statuses.count

    /// Stripes, allocated on first use (the address, 0 until then).
    private let stripes: UnsafeMutablePointer<Atomic<UInt>>
    private let others = Lock<[Key: Int]>([:])

    /// A counted combination; `route` -1 is "unmatched".
    struct Key: Hashable {
        var route: Int
        var method: Int
        var status: Int
    }

    init() {
        stripes = .allocate(capacity: Self.stripeCount)
        for index in 0..<Self.stripeCount { (stripes + index).initialize(to: Atomic(0)) }
    }

    deinit {
        for index in 0..<Self.stripeCount {
            if let table = UnsafeMutablePointer<Atomic<Int>>(bitPattern: stripes[index].load(ordering: .acquiring)) {
                table.deinitialize(count: Self.slotsPerStripe)
                table.deallocate()
            }
        }
        stripes.deinitialize(count: Self.stripeCount)
        stripes.deallocate()
    }

    /// Counts one request.
    func add(route: Int, method: Int, status: Int) {
        let statusIndex = status >= 0 && status < Self.statusIndex.count ? Int(Self.statusIndex[status]) : -1
        guard statusIndex >= 0, route >= -1, route < Self.maxRoutes, method >= 0, method < Self.methodCount else {
            others.withLock { $0[Key(route: route, method: method, status: status), default: 0] += 1 }
            return
        }
        let slot = ((route + 1) * Self.methodCount + method) * Self.statuses.count + statusIndex
        stripe(Self.stripeOfThisThread())[slot].add(1, ordering: .relaxed)
    }

    /// Every non-zero count, the stripes summed.
    func totals() -> [Key: Int] {
        var result = others.withLock { $0 }
        for index in 0..<Self.stripeCount {
            guard let table = UnsafeMutablePointer<Atomic<Int>>(bitPattern: stripes[index].load(ordering: .acquiring))
            else { continue }
            for slot in 0..<Self.slotsPerStripe {
                let count = table[slot].load(ordering: .relaxed)
                guard count > 0 else { continue }
                let statusIndex = slot % Self.statuses.count
                let method = (slot / Self.statuses.count) % Self.methodCount
                let route = slot / (Self.statuses.count * Self.methodCount) - 1
                result[Key(route: route, method: method, status: Self.statuses[statusIndex]), default: 0] += count
            }
        }
        return result
    }

    private static func stripeOfThisThread() -> Int {
        // pthread_t is the thread's descriptor address: mix it so neighbouring threads differ.
        let mixed =
            UInt64(truncatingIfNeeded: UInt(bitPattern: Int(bitPattern: UInt(pthread_self())))) &* 0x9E37_79B9_7F4A_7C15
        return Int(mixed >> 62) % stripeCount
    }

    private func stripe(_ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        if let table = UnsafeMutablePointer<Atomic<Int>>(bitPattern: stripes[index].load(ordering: .acquiring)) {
            return table
        }
        let made = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: Self.slotsPerStripe)
        for slot in 0..<Self.slotsPerStripe { (made + slot).initialize(to: Atomic(0)) }
        let (won, current) = stripes[index].compareExchange(
            expected: 0, desired: UInt(bitPattern: made), ordering: .acquiringAndReleasing)
        if won { return made }
        made.deinitialize(count: Self.slotsPerStripe)
        made.deallocate()
        // Lost the race: the exchange failed because another thread stored its (non-zero) table.
        return UnsafeMutablePointer<Atomic<Int>>(bitPattern: current)!
    }
}
