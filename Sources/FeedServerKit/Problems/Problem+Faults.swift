import FeedStore

/// The fault lab's problems.
extension Problem {
    /// 404 for the fault route while the lab is off.
    static var faultLabOff: Problem {
        Problem(
            status: 404, type: "fault-lab-off", title: "Fault lab is off",
            detail:
                "The fault lab is off: start feed-server with --fault-lab (FEED_SERVER_FAULT_LAB=on) to write "
                + "broken states on purpose."
        )
    }

    /// 415 for a fault order that is not JSON.
    static var unsupportedFaultType: Problem {
        Problem(
            status: 415, type: "unsupported-media-type", title: "Unsupported media type",
            detail: "Send the fault as application/json, for example {\"kind\":\"corrupt-feed\"}.")
    }

    /// 413 for a fault order over its limit.
    static func faultOrderTooLarge(bytes: Int, limit: Int) -> Problem {
        Problem(
            status: 413, type: "body-too-large", title: "Request body too large",
            detail: "A fault order has \(bytes) bytes; the limit is \(limit).")
    }

    /// 400 for a fault order whose members are wrong.
    static func invalidFault(_ detail: String) -> Problem { .badRequest("invalid-fault", "Invalid fault", detail) }

    /// The problem for a fault the store could not write.
    init(_ error: FaultError) {
        switch error {
        case .invalidGroupName(let name, let reason):
            self.init(PublishError.invalidGroupName(name, reason: reason))
        case .notApplicable(let detail):
            self = Problem(status: 409, type: "fault-not-applicable", title: "Fault not applicable", detail: detail)
        case .storage(let fileError):
            // The store made the path relative to the root: no absolute server path in a detail.
            self = .storage(fileError, outcome: .unchanged)
        }
    }
}
