import FeedStore
import HTTPTransport

/// `POST /feeds/{group}/faults`: the fault lab, which writes on purpose the broken states real
/// failures leave on disk, so an app's fallback can be tested (docs/recipes.md). Only with
/// `--fault-lab`; otherwise every method answers 404 (and no token is asked for first).
struct FaultRoutes: Sendable {
    let store: FeedStore
    /// Nil when the lab is off.
    let lab: FaultLab?
    let metrics: Metrics

    /// The route template (also exempt from tokens while the lab is off, so it is a plain 404).
    static let template = "/feeds/{group}/faults"

    var routes: [Route] {
        guard let lab else {
            let off: RouteHandler = { _ throws(Problem) in throw Problem.faultLabOff }
            let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"].map { ($0, off) }
            return [Route(Self.template, methods: Dictionary(uniqueKeysWithValues: methods))]
        }
        // Offloaded: a fault waits for its group's lock (bounded, see FaultLab), never on
        // libmicrohttpd's threads, which keep answering cached reads and /healthz meanwhile.
        return [
            Route(
                Self.template, methods: ["POST": { routed throws(Problem) in try inject(routed, lab: lab) }],
                bodies: ["POST": Self.order.policy], offloaded: ["POST"])
        ]
    }

    /// A fault order is a small JSON object.
    static let order = SmallJSONBody(name: "a fault order", example: #"{"kind":"corrupt-feed"}"#, limit: 64 << 10)

    func inject(_ routed: RoutedRequest, lab: FaultLab) throws(Problem) -> HTTPResponse {
        let group = routed.parameters[0]
        if let reason = SafeName.problem(with: group) {
            throw Problem(PublishError.invalidGroupName(group, reason: reason))
        }
        try Self.order.requireJSON(routed.request)
        let order = try FaultOrder.parse(routed.request.body, limits: store.configuration.payloadLimits)
        let outcome = try lab.inject(store: store, order.request, group: group, seconds: order.seconds)
        metrics.recordFault(outcome.kind)
        let body = CompactJSON.bytes(Self.json(outcome, seconds: order.seconds)) + [0x0A]
        var answer = HTTPResponse.json(201, body, headers: [("Cache-Control", "no-store")])
        answer.annotation = JournalFacts(
            result: outcome.kind.rawValue, generationId: outcome.generationId, schemaVersion: outcome.schemaVersion)
        return answer
    }

    /// `{"kind","generationId"?,"schemaVersion","readerServes","skipped","serverServes","detail"}`.
    static func json(_ outcome: FaultOutcome, seconds: Int?) -> JSONValue {
        var members = [JSONMember("kind", .string(outcome.kind.rawValue))]
        if let id = outcome.generationId { members.append(JSONMember("generationId", .string(id))) }
        if let seconds { members.append(JSONMember("seconds", .number(String(seconds)))) }
        members += [
            JSONMember("schemaVersion", .number(String(outcome.schemaVersion))),
            JSONMember("readerServes", outcome.widgetBridgeRead.served.map { .string($0.id) } ?? .null),
            JSONMember("skipped", skippedJSON(outcome.widgetBridgeRead)),
            JSONMember("serverServes", outcome.serverRead.served.map { .string($0.id) } ?? .null),
            JSONMember("detail", .string(outcome.detail)),
        ]
        return .object(members)
    }

    /// What a reader passed over, in order: `[{"id","reason","detail"}]` (an unusable pointer
    /// first, as `current.json` / `unusable-pointer`).
    static func skippedJSON(_ read: FeedRead) -> JSONValue {
        var entries: [JSONValue] = []
        if let problem = read.pointerProblem {
            entries.append(
                .object([
                    JSONMember("id", .string("current.json")), JSONMember("reason", .string("unusable-pointer")),
                    JSONMember("detail", .string(problem)),
                ]))
        }
        for skipped in read.skipped {
            entries.append(
                .object([
                    JSONMember("id", .string(skipped.id)), JSONMember("reason", .string(skipped.reason.code)),
                    JSONMember("detail", .string(skipped.reason.description)),
                ]))
        }
        return .array(entries)
    }

    /// `{"kind","generationId"?,"injectedAtEpochMs","schemaVersion","widgetBridge","server"}` for `/generations`.
    static func json(_ fault: InjectedFault) -> JSONValue {
        var members = [JSONMember("kind", .string(fault.kind.rawValue))]
        if let id = fault.generationId { members.append(JSONMember("generationId", .string(id))) }
        members += [
            JSONMember("injectedAtEpochMs", .number(String(fault.injectedAtEpochMs))),
            JSONMember("schemaVersion", .number(String(fault.readerSchemaVersion))),
            JSONMember("widgetBridge", .string(fault.widgetBridge)),
            JSONMember("server", .string(fault.server)),
        ]
        return .object(members)
    }

}

/// The body of `POST /feeds/{group}/faults`, checked member by member.
struct FaultOrder {
    var request: FaultRequest
    /// `slow-publish` only: how long the `.tmp` folder is held.
    var seconds: Int?

    static func parse(_ body: [UInt8], limits: JSONLimits) throws(Problem) -> FaultOrder {
        let value: JSONValue
        do { value = try JSONParser.parse(body, limits: limits) } catch {
            throw Problem.invalidJSON(error, title: "Invalid JSON", subject: "body")
        }
        guard case .object(let members) = value else {
            throw Problem.invalidFault("The body must be a JSON object such as {\"kind\":\"corrupt-feed\"}.")
        }
        let kinds = FaultKind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = value["kind"]?.stringValue, let kind = FaultKind(rawValue: text) else {
            throw Problem.invalidFault("kind must be one of \(kinds).")
        }
        var order = FaultOrder(request: FaultRequest(kind: kind), seconds: nil)
        let allowed: Set<String> =
            switch kind {
            case .slowPublish: ["kind", "seconds", "payload"]
            case .missingAsset, .truncatedAsset: ["kind", "asset"]
            default: ["kind"]
            }
        if let extra = members.first(where: { !allowed.contains($0.name) }) {
            throw Problem.invalidFault(
                "'\(extra.name)' does not apply to \(kind.rawValue) (it takes: "
                    + "\(allowed.sorted().joined(separator: ", ")))."
            )
        }
        if kind == .slowPublish {
            guard let seconds = wholeNumber(value["seconds"]), (0...FaultKind.maxHoldSeconds).contains(seconds) else {
                throw Problem.invalidFault(
                    "slow-publish needs seconds, an integer from 0 to \(FaultKind.maxHoldSeconds).")
            }
            order.seconds = seconds
            order.request.payload = value["payload"]
        }
        if let asset = value["asset"] {
            guard let name = asset.stringValue, SafeName.isSafe(name) else {
                throw Problem.invalidFault("asset must be the name of one of the served generation's assets.")
            }
            order.request.asset = name
        }
        return order
    }

    /// A JSON number with no fraction, in any spelling JSON allows (`25`, `25.0`, `2.5e1`: JSON
    /// Schema's `integer` admits all three); nil otherwise or beyond ±10⁹.
    private static func wholeNumber(_ value: JSONValue?) -> Int? {
        guard case .number(let literal)? = value, let number = Double(literal), number.rounded() == number,
            abs(number) <= 1e9
        else { return nil }
        return Int(number)
    }
}
