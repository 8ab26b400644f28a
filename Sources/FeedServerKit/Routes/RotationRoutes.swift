import FeedStore
import HTTPTransport

/// `GET /rotation`: WidgetBridge's rotation math, on the server.
struct RotationRoutes: Sendable {
    let clock: any FeedClock

    var routes: [Route] {
        [
            Route("/rotation", methods: ["GET": { routed throws(Problem) in try rotation(routed) }])
        ]
    }

    /// `?epochMs=&zoneOffsetSeconds=&count=` → `{"slot","index"}` (epochMs defaults to now).
    func rotation(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let query = routed.request.query
        let epochMs = try Parameters.int64(query["epochMs"], "epochMs") ?? clock.nowEpochMs()
        let zone = try Parameters.int(query["zoneOffsetSeconds"], "zoneOffsetSeconds", -64_800...64_800) ?? 0
        guard let count = try Parameters.int(query["count"], "count", 1...1_000_000) else {
            throw Problem.missingParameter("count (the number of items, 1 or more) is required.")
        }
        let slot = WidgetRotation.hourSlot(epochMs: epochMs, zoneOffsetSeconds: zone)
        let body = CompactJSON.bytes(
            .object([
                JSONMember("slot", .number(String(slot))),
                JSONMember("index", .number(String(WidgetRotation.index(slot: slot, count: count)))),
            ]))
        return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
    }
}

/// Integer query parameters with a 400 that names the parameter and its range.
enum Parameters {
    static func int(_ text: String?, _ name: String, _ range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidParameter(
                "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound) (got '\(text)').")
        }
        return value
    }

    /// The range of epoch milliseconds accepted: ±8.64 × 10^15, the range of a JavaScript `Date`
    /// (±100,000,000 days), which every client of these routes can represent.
    static let epochMsRange: ClosedRange<Int64> = -8_640_000_000_000_000...8_640_000_000_000_000

    static func int64(_ text: String?, _ name: String) throws(Problem) -> Int64? {
        guard let text else { return nil }
        // A range check, not arithmetic: `abs(Int64.min)` traps.
        guard let value = Int64(text), epochMsRange.contains(value) else {
            throw .invalidParameter(
                "\(name) must be epoch milliseconds from \(epochMsRange.lowerBound) to \(epochMsRange.upperBound) "
                    + "(got '\(text)')."
            )
        }
        return value
    }
}
