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
            let off: @Sendable (RoutedRequest) -> HTTPResponse = { _ in
                Problem(status: 404, type: "fault-lab-off", title: "Fault lab is off",
                        detail: "The fault lab is off: start feed-server with --fault-lab (FEED_SERVER_FAULT_LAB=on) to write broken states on purpose.").response
            }
            return [Route(Self.template, methods: Dictionary(uniqueKeysWithValues: ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"].map { ($0, off) }))]
        }
        return [Route(Self.template, methods: ["POST": { inject($0, lab: lab) }], bodies: ["POST": orderBodies])]
    }

    /// A fault order is a small JSON object: judged from the head, kept in memory.
    private var orderBodies: BodyPolicy {
        BodyPolicy(limits: ["application/json": 64 << 10],
                   unsupported: { _ in Self.unsupportedMediaType },
                   tooLarge: { bytes, limit in
                       Problem(status: 413, type: "body-too-large", title: "Request body too large",
                               detail: "A fault order has \(bytes) bytes; the limit is \(limit).")
                   })
    }

    private static let unsupportedMediaType = Problem(status: 415, type: "unsupported-media-type", title: "Unsupported media type",
                                                      detail: "Send the fault as application/json, for example {\"kind\":\"corrupt-feed\"}.")

    func inject(_ routed: RoutedRequest, lab: FaultLab) -> HTTPResponse {
        let group = routed.parameters[0]
        if let reason = SafeName.problem(with: group) {
            return PublishProblems.problem(for: .invalidGroupName(group, reason: reason)).response
        }
        guard routed.request.mediaType == "application/json" else { return Self.unsupportedMediaType.response }
        let order: FaultOrder
        switch FaultOrder.parse(routed.request.body, limits: store.configuration.payloadLimits) {
        case .failure(let problem): return problem.response
        case .success(let parsed): order = parsed
        }
        let result: Result<FaultOutcome, FaultError>
        if order.request.kind == .slowPublish {
            do {
                result = try lab.slowPublish(store: store, order.request, group: group, seconds: order.seconds)
            } catch {
                return Problem.threadUnavailable(error).response
            }
        } else {
            result = Result { () throws(FaultError) in try store.injectFault(order.request, group: group) }
        }
        switch result {
        case .failure(let error):
            return Self.problem(for: error).response
        case .success(let outcome):
            metrics.recordFault(outcome.kind)
            return .json(201, CompactJSON.bytes(Self.json(outcome, seconds: order.seconds)) + [0x0A], headers: [("Cache-Control", "no-store")])
        }
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
            entries.append(.object([JSONMember("id", .string("current.json")), JSONMember("reason", .string("unusable-pointer")),
                                    JSONMember("detail", .string(problem))]))
        }
        for skipped in read.skipped {
            entries.append(.object([JSONMember("id", .string(skipped.id)), JSONMember("reason", .string(skipped.reason.code)),
                                    JSONMember("detail", .string(skipped.reason.description))]))
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

    static func problem(for error: FaultError) -> Problem {
        switch error {
        case .invalidGroupName(let name, let reason):
            return PublishProblems.problem(for: .invalidGroupName(name, reason: reason))
        case .notApplicable(let detail):
            return Problem(status: 409, type: "fault-not-applicable", title: "Fault not applicable", detail: detail)
        case .storage(let fileError):
            // The store made the path relative to the root: no absolute server path in a detail.
            return PublishProblems.problem(for: .storage(fileError, outcome: .unchanged))
        }
    }
}

/// The body of `POST /feeds/{group}/faults`, checked member by member.
struct FaultOrder {
    var request: FaultRequest
    /// `slow-publish` only: how long the `.tmp` folder is held.
    var seconds: Int?

    static func parse(_ body: [UInt8], limits: JSONLimits) -> Result<FaultOrder, Problem> {
        let value: JSONValue
        do { value = try JSONParser.parse(body, limits: limits) } catch {
            var problem = Problem.badRequest("invalid-json", "Invalid JSON", "The body is not valid JSON: \(error.reason) at byte \(error.offset).")
            problem.extensions = [("offset", .number(String(error.offset))), ("reason", .string(error.reason))]
            return .failure(problem)
        }
        guard case .object(let members) = value else { return .failure(invalid("The body must be a JSON object such as {\"kind\":\"corrupt-feed\"}.")) }
        let kinds = FaultKind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = value["kind"]?.stringValue, let kind = FaultKind(rawValue: text) else {
            return .failure(invalid("kind must be one of \(kinds)."))
        }
        var order = FaultOrder(request: FaultRequest(kind: kind), seconds: nil)
        let allowed: Set<String> = switch kind {
        case .slowPublish: ["kind", "seconds", "payload"]
        case .missingAsset, .truncatedAsset: ["kind", "asset"]
        default: ["kind"]
        }
        if let extra = members.first(where: { !allowed.contains($0.name) }) {
            return .failure(invalid("'\(extra.name)' does not apply to \(kind.rawValue) (it takes: \(allowed.sorted().joined(separator: ", ")))."))
        }
        if kind == .slowPublish {
            guard let seconds = wholeNumber(value["seconds"]), (0...FaultKind.maxHoldSeconds).contains(seconds) else {
                return .failure(invalid("slow-publish needs seconds, an integer from 0 to \(FaultKind.maxHoldSeconds)."))
            }
            order.seconds = seconds
            order.request.payload = value["payload"]
        }
        if let asset = value["asset"] {
            guard let name = asset.stringValue, SafeName.isSafe(name) else {
                return .failure(invalid("asset must be the name of one of the served generation's assets."))
            }
            order.request.asset = name
        }
        return .success(order)
    }

    /// A JSON number with no fraction, in any spelling JSON allows (`25`, `25.0`, `2.5e1`: JSON
    /// Schema's `integer` admits all three); nil otherwise or beyond ±10⁹.
    private static func wholeNumber(_ value: JSONValue?) -> Int? {
        guard case .number(let literal)? = value, let number = Double(literal), number.rounded() == number, abs(number) <= 1e9 else { return nil }
        return Int(number)
    }

    private static func invalid(_ detail: String) -> Problem {
        .badRequest("invalid-fault", "Invalid fault", detail)
    }
}
