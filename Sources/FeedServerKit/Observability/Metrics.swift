import FeedStore
import Synchronization

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
    /// Long-poll and event-stream clients waiting now (none until live updates exist).
    let openWaiters = Atomic<Int>(0)
    /// Slow requests being handled on the work pool right now.
    let workInProgress = Atomic<Int>(0)

    /// Publish warnings by `LintCode` (index in `allCases`), fault-lab injections by `FaultKind`.
    private let warnings = Lock([Int](repeating: 0, count: LintCode.allCases.count))
    private let faults = Lock([Int](repeating: 0, count: FaultKind.allCases.count))

    private let counts = Lock<[Int: Int]>([:])
    private let names = Lock<[String]>([])

    /// Counts a finished request by route template, method and status, and its body bytes.
    /// (Keyed by small integers: this runs on every request.)
    func recordRequest(route: Int, method: String, status: Int, bytes: Int) {
        let key = route << 24 | Self.methodCode(method) << 12 | status
        counts.withLock { $0[key, default: 0] += 1 }
        bytesServed.add(bytes, ordering: .relaxed)
    }

    /// Registers the route templates; `recordRequest` refers to them by position (-1: unmatched).
    func register(routes: [String]) { names.withLock { $0 = routes } }

    private static let methods = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "POST", "PATCH"]
    private static func methodCode(_ method: String) -> Int { methods.firstIndex(of: method) ?? methods.count }

    private func requestCounts() -> [RequestKey: Int] {
        let routeNames = names.withLock { $0 }
        var result: [RequestKey: Int] = [:]
        for (key, count) in counts.withLock({ $0 }) {
            let route = key >> 24
            let method = (key >> 12) & 0xFFF
            result[RequestKey(route: route >= 0 && route < routeNames.count ? routeNames[route] : "unmatched",
                              method: method < Self.methods.count ? Self.methods[method] : "other", status: key & 0xFFF), default: 0] += count
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
                if let index = LintCode.allCases.firstIndex(of: code) { counts[index] = counts[index].addingReportingOverflow(count).overflow ? .max : counts[index] &+ count }
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

    /// The exposition text.
    func render() -> String {
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }
        family("feedserver_http_requests_total", "counter", "HTTP requests by route template, method and status.")
        for (key, count) in requestCounts().sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            lines.append("feedserver_http_requests_total{route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\"} \(count)")
        }
        family("feedserver_http_response_body_bytes_total", "counter", "Response body bytes sent (HEAD counts the bytes a GET would send).")
        lines.append("feedserver_http_response_body_bytes_total \(bytesServed.load(ordering: .relaxed))")
        family("feedserver_publishes_total", "counter", "Publishes by result.")
        lines.append("feedserver_publishes_total{result=\"published\"} \(published.load(ordering: .relaxed))")
        lines.append("feedserver_publishes_total{result=\"unchanged\"} \(unchanged.load(ordering: .relaxed))")
        family("feedserver_publish_duration_seconds", "histogram", "Time to publish (canonicalise, encode images, write durably).")
        let histogram = publishLatency.withLock { $0 }
        for (index, bound) in Histogram.bounds.enumerated() {
            lines.append("feedserver_publish_duration_seconds_bucket{le=\"\(bound)\"} \(histogram.counts[index])")
        }
        lines.append("feedserver_publish_duration_seconds_bucket{le=\"+Inf\"} \(histogram.count)")
        lines.append("feedserver_publish_duration_seconds_sum \(histogram.sum)")
        lines.append("feedserver_publish_duration_seconds_count \(histogram.count)")
        family("feedserver_publish_warnings_total", "counter", "Platform-limit and asset warnings in publish answers, by code (docs/widget-limits.md).")
        for (code, count) in zip(LintCode.allCases, warnings.withLock { $0 }) {
            lines.append("feedserver_publish_warnings_total{code=\"\(code.rawValue)\"} \(count)")
        }
        family("feedserver_faults_injected_total", "counter", "Broken states written by the fault lab (--fault-lab), by kind.")
        for (kind, count) in zip(FaultKind.allCases, faults.withLock { $0 }) {
            lines.append("feedserver_faults_injected_total{kind=\"\(kind.rawValue)\"} \(count)")
        }
        family("feedserver_fallbacks_served_total", "counter", "Reads answered with a generation other than the pointer's current one.")
        lines.append("feedserver_fallbacks_served_total \(fallbacksServed.load(ordering: .relaxed))")
        family("feedserver_open_waiters", "gauge", "Clients waiting for a change (long-poll, event streams).")
        lines.append("feedserver_open_waiters \(openWaiters.load(ordering: .relaxed))")
        family("feedserver_work_in_progress", "gauge", "Slow requests (publishes, DELETE, listings) running on the work pool.")
        lines.append("feedserver_work_in_progress \(workInProgress.load(ordering: .relaxed))")
        return lines.joined(separator: "\n") + "\n"
    }
}
