import FeedStore
import HTTPTransport

/// `GET /rotation` and `GET /feeds/{group}/timeline`: WidgetBridge's rotation math, on the server.
struct RotationRoutes: Sendable {
    let store: FeedStore
    let cache: FeedResponseCache
    let clock: any FeedClock

    var routes: [Route] {
        [
            Route("/rotation", methods: ["GET": { rotation($0) }]),
            Route("/feeds/{group}/timeline", methods: ["GET": { timeline($0) }], offloaded: ["GET"]),
        ]
    }

    /// `?epochMs=&zoneOffsetSeconds=&count=` → `{"slot","index"}` (epochMs defaults to now).
    func rotation(_ routed: RoutedRequest) -> HTTPResponse {
        let query = routed.request.query
        do {
            let epochMs = try Parameters.int64(query["epochMs"], "epochMs") ?? clock.nowEpochMs()
            let zone = try Parameters.int(query["zoneOffsetSeconds"], "zoneOffsetSeconds", -64_800...64_800) ?? 0
            guard let count = try Parameters.int(query["count"], "count", 1...1_000_000) else {
                throw Problem.badRequest("invalid-parameter", "Missing parameter", "count (the number of items, 1 or more) is required.")
            }
            let slot = WidgetRotation.hourSlot(epochMs: epochMs, zoneOffsetSeconds: zone)
            let body = CompactJSON.bytes(.object([
                JSONMember("slot", .number(String(slot))),
                JSONMember("index", .number(String(WidgetRotation.index(slot: slot, count: count)))),
            ]))
            return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
        } catch let problem as Problem {
            return problem.response
        } catch {
            return Problem.badRequest("invalid-parameter", "Invalid parameter", "\(error)").response
        }
    }

    /// `?items=<JSON Pointer to an array in the payload>&hours=24&zoneOffsetSeconds=&start=<epochMs>`.
    func timeline(_ routed: RoutedRequest) -> HTTPResponse {
        let group = routed.parameters[0]
        let query = routed.request.query
        do {
            guard SafeName.isGroupName(group) else {
                throw Problem.badRequest("invalid-group-name", "Invalid group name", "Group name '\(group)' is not a safe name.")
            }
            guard let pointerText = query["items"], let pointer = JSONPointer(pointerText) else {
                throw Problem.badRequest("invalid-parameter", "Invalid parameter",
                                         "items must be a JSON Pointer to an array in the payload, such as /quotes.")
            }
            let hours = try Parameters.int(query["hours"], "hours", 1...168) ?? 24
            let zone = try Parameters.int(query["zoneOffsetSeconds"], "zoneOffsetSeconds", -64_800...64_800) ?? 0
            let start = try Parameters.int64(query["start"], "start") ?? clock.nowEpochMs()
            let schemaVersion = try Parameters.int(query["schemaVersion"], "schemaVersion", 0...Int(Int32.max))
            // Through the read cache: the payload is parsed once per served generation.
            guard case .feed(let generation) = cache.lookup(.init(group: group, schemaVersion: schemaVersion)) else {
                throw Problem(status: 404, type: "no-feed", title: "No feed", detail: "Group '\(group)' has no readable generation.")
            }
            let payload = try generation.payload()
            guard let items = pointer.resolve(in: payload)?.arrayValue, !items.isEmpty else {
                throw Problem(status: 422, type: "no-items", title: "No items at that pointer",
                              detail: "\(pointerText) does not name a non-empty array in the payload of \(generation.generationId).")
            }
            let entries: [JSONValue] = WidgetTimeline.entries(items: items, startEpochMs: start, hours: hours, zoneOffsetSeconds: zone).map {
                .object([
                    JSONMember("startEpochMs", .number(String($0.startEpochMs))),
                    JSONMember("slot", .number(String($0.slot))),
                    JSONMember("index", .number(String($0.index))),
                    JSONMember("item", $0.item),
                ])
            }
            let body = CompactJSON.bytes(.object([
                JSONMember("generationId", .string(generation.generationId)),
                JSONMember("entries", .array(entries)),
            ]))
            return .json(200, body + [0x0A], headers: [("Cache-Control", "no-store")])
        } catch let problem as Problem {
            return problem.response
        } catch {
            return Problem.badRequest("invalid-parameter", "Invalid parameter", "\(error)").response
        }
    }
}

/// Integer query parameters with a 400 that names the parameter and its range.
enum Parameters {
    static func int(_ text: String?, _ name: String, _ range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .badRequest("invalid-parameter", "Invalid parameter", "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound) (got '\(text)').")
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
            throw .badRequest("invalid-parameter", "Invalid parameter",
                              "\(name) must be epoch milliseconds from \(epochMsRange.lowerBound) to \(epochMsRange.upperBound) (got '\(text)').")
        }
        return value
    }
}
