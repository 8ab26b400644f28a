import FeedStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// 400 for a fault order whose members are wrong.
    static func invalidFault(_ detail: String) -> Problem { .badRequest("invalid-fault", "Invalid fault", detail) }

    /// 409 for a fault to a group a `slow-publish` holds longer than a fault waits for a lock.
    /// A 409 rather than a 503: the server is well, and the group's own state (a hold the client
    /// asked for, ending at a known time) is what conflicts, as for `fault-not-applicable`; 423
    /// is WebDAV's, whose locks a client holds a token for and can release, which is not so here.
    static func groupHeld(_ group: String, generationId: String, untilEpochMs: Int64, remainingSeconds: Int) -> Problem
    {
        let seconds = max(1, remainingSeconds)
        return Problem(
            status: 409, type: "group-held", title: "Group held by a slow publish",
            detail:
                "A slow-publish holds group '\(group)' (its lock and generations/\(generationId).tmp) until "
                + "\(Self.utc(epochMs: untilEpochMs)), \(seconds) s from now; nothing was written. Retry after "
                + "\(seconds) s, or stop the server to end the hold early.",
            headers: [("Retry-After", String(seconds))],
            extensions: [
                ("heldUntilEpochMs", .number(String(untilEpochMs))), ("generationId", .string(generationId)),
            ])
    }

    /// 409 for a fault whose group lock another writer kept for the whole wait.
    static func groupLocked(_ group: String, waitedSeconds: Int) -> Problem {
        Problem(
            status: 409, type: "group-locked", title: "Group locked by another writer",
            detail:
                "Another writer held the lock of group '\(group)' (a publish in progress, or another process on "
                + "this root) for the \(waitedSeconds) s a fault waits for it; nothing was written. Retry in a moment.",
            headers: [("Retry-After", "1")])
    }

    /// `2026-01-31T09:00:00Z` (UTC, whole seconds) for a moment in epoch milliseconds.
    static func utc(epochMs: Int64) -> String {
        var seconds = time_t(epochMs / 1000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "epoch ms \(epochMs)" }
        var text = [CChar](repeating: 0, count: 32)
        let count = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: text.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The problem for a fault the store could not write.
    init(_ error: FaultError) {
        switch error {
        case .invalidGroupName(let name, let reason):
            self.init(PublishError.invalidGroupName(name, reason: reason))
        case .notApplicable(let detail):
            self = Problem(status: 409, type: "fault-not-applicable", title: "Fault not applicable", detail: detail)
        case .groupLocked(let group):
            self = .groupLocked(group, waitedSeconds: Int(FaultLab.lockWaitNanos / 1_000_000_000))
        case .storage(let fileError):
            // The store made the path relative to the root: no absolute server path in a detail.
            self = .storage(fileError, outcome: .unchanged)
        }
    }
}
