import FeedStore
import HTTPTransport

/// `GET /rotation` and `GET /feeds/{group}/timeline`: WidgetBridge's rotation math, on the server.
struct RotationRoutes: Sendable {
    let store: FeedStore
    let cache: FeedResponseCache
    let clock: any FeedClock

    var routes: [Route] {
        [
            Route("/rotation", methods: ["GET": { routed throws(Problem) in try rotation(routed) }]),
            Route(
                "/feeds/{group}/timeline", methods: ["GET": { routed throws(Problem) in try timeline(routed) }],
                offloaded: ["GET"]),
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

    /// `?items=<JSON Pointer to an array in the payload>&hours=24&zoneOffsetSeconds=&start=<epochMs>`.
    func timeline(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = routed.parameters[0]
        let query = routed.request.query
        guard SafeName.isGroupName(group) else { throw Problem.notASafeGroupName(group) }
        guard let pointerText = query["items"], let pointer = JSONPointer(pointerText) else {
            throw Problem.invalidParameter("items must be a JSON Pointer to an array in the payload, such as /quotes.")
        }
        let hours = try Parameters.int(query["hours"], "hours", 1...168) ?? 24
        let zone = try Parameters.int(query["zoneOffsetSeconds"], "zoneOffsetSeconds", -64_800...64_800) ?? 0
        let start = try Parameters.int64(query["start"], "start") ?? clock.nowEpochMs()
        let schemaVersion = try Parameters.int(query["schemaVersion"], "schemaVersion", 0...Int(Int32.max))
        // Through the read cache: the payload is parsed once per served generation.
        guard case .feed(let generation) = cache.lookup(.init(group: group, schemaVersion: schemaVersion)) else {
            throw Problem.noFeed(group: group, schemaVersion: nil)
        }
        let payload: JSONDocument
        do { payload = try cache.payload(of: generation) } catch { throw Problem.invalidParameter("\(error)") }
        // The array's element positions are kept per generation, so a timeline reads only the
        // items its hours show, however long the array.
        guard
            let positions = cache.elementPositions(of: generation, pointer: pointer, key: pointerText, in: payload),
            !positions.isEmpty
        else {
            throw Problem.noItems(pointer: pointerText, generation: generation.generationId)
        }
        let entries = WidgetTimeline.entries(
            count: positions.count, startEpochMs: start, hours: hours, zoneOffsetSeconds: zone
        ) { _ in .null }
        // Items are copied as their canonical bytes, never as trees, and the answer is sized
        // before it is built: an hour per entry repeats an item, so a large one is refused.
        let items = entries.map { payload.node(atTapePosition: positions[$0.index])?.compactBytes ?? [] }
        let itemBytes = items.reduce(0) { $0 &+ $1.count }
        let limit = store.configuration.maxFeedBytes
        guard itemBytes <= limit else {
            throw Problem.timelineTooLarge(bytes: itemBytes, limit: limit, hours: entries.count)
        }
        var body = Array(#"{"generationId":"#.utf8)
        body.reserveCapacity(itemBytes + entries.count * 96 + 128)
        CompactJSON.writeString(generation.generationId, to: &body)
        body += Array(#","entries":["#.utf8)
        for (position, (entry, item)) in zip(entries, items).enumerated() {
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body += Array(
                #"{"startEpochMs":\#(entry.startEpochMs),"slot":\#(entry.slot),"index":\#(entry.index),"item":"#.utf8)
            body += item.isEmpty ? Array("null".utf8) : Array(item)
            body.append(UInt8(ascii: "}"))
        }
        body += Array("]}\n".utf8)
        return .json(200, body, headers: [("Cache-Control", "no-store")])
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
