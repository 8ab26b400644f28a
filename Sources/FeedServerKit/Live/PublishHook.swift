import ConcurrencyPrimitives
import Dispatch
import FeedStore
import HTTPTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--on-publish <command>`: runs through `/bin/sh -c` after each change to a feed (a publish
/// that wrote a generation, a DELETE that removed a feed, a fault-lab injection), with the
/// change's `FEED_*` variables (`variables(for:)`) set over the server's environment, less its
/// tokens. Runs are coalesced per group and bounded across groups (`HookSchedule`) on their own
/// queue, so the response never waits; their output and failures go to the log.
final class PublishHook: Sendable {
    let command: String
    /// How long a run may take before its process group is killed (`--on-publish-timeout`).
    let timeoutSeconds: Int
    private let schedule: Lock<HookSchedule<PublishEvent>>
    private let queue = DispatchQueue(label: "feed-server.on-publish", attributes: .concurrent)

    /// Two groups' hooks at once: a sync to one device need not wait for another group's, and a
    /// burst of groups does not start a process each.
    init(command: String, timeoutSeconds: Int = 120, maxRunning: Int = 2) {
        self.command = command
        self.timeoutSeconds = timeoutSeconds
        schedule = Lock(HookSchedule(maxRunning: maxRunning))
    }

    /// Schedules the hook for one change.
    func run(for event: PublishEvent) {
        if let next = schedule.withLock({ $0.submitted(event, group: event.group) }) { start(next.event) }
    }

    private func start(_ event: PublishEvent) {
        queue.async { [self] in
            execute(event)
            if let next = schedule.withLock({ $0.finished(group: event.group) }) { start(next.event) }
        }
    }

    private func execute(_ event: PublishEvent) {
        let prefix = "on-publish " + Self.logName(event) + ": "
        do {
            let ending = try ShellCommand.run(
                command, adding: Self.variables(for: event), timeoutSeconds: timeoutSeconds
            ) { AccessLog.message(prefix + $0) }
            if let ending { AccessLog.message(prefix + ending) }
        } catch {
            AccessLog.message(prefix + "could not start /bin/sh: \(error)")
        }
    }

    /// How the log names a change: `group/generation` for a publish, with the kind after others.
    static func logName(_ event: PublishEvent) -> String {
        let name = event.group + (event.generationId.map { "/" + $0 } ?? "")
        switch event.kind {
        case .publish: return name
        case .delete: return name + " (delete)"
        case .fault: return name + " (fault \(event.fault ?? "?"))"
        }
    }

    /// Every variable the hook may get; those a change does not have are left unset (and not
    /// inherited from the server's environment either), never set empty.
    static let variableNames: Set<String> = [
        "FEED_EVENT", "FEED_GROUP", "FEED_GROUP_DIR", "FEED_GENERATION_ID", "FEED_FINGERPRINT", "FEED_DIR",
        "FEED_FAULT",
    ]

    /// The change's variables: `FEED_EVENT` (publish, delete, fault), `FEED_GROUP`, `FEED_GROUP_DIR`
    /// always; `FEED_GENERATION_ID` for the generation written or named, `FEED_FINGERPRINT` when its
    /// `feed.json` declares one, `FEED_DIR` when its folder exists; `FEED_FAULT` for a fault.
    static func variables(for event: PublishEvent) -> [String: String] {
        var variables = [
            "FEED_EVENT": event.kind.rawValue,
            "FEED_GROUP": event.group,
            "FEED_GROUP_DIR": absolute(event.groupDirectory),
        ]
        variables["FEED_GENERATION_ID"] = event.generationId
        variables["FEED_FINGERPRINT"] = event.fingerprint
        variables["FEED_DIR"] = event.directory.map(absolute)
        variables["FEED_FAULT"] = event.fault
        return variables
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
