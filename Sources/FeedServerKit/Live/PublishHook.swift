import FeedStore
import Foundation

/// `--on-publish <command>`: runs through `/bin/sh -c` after each publish that changed a feed
/// (never for `unchanged`), with `FEED_GROUP`, `FEED_GENERATION_ID`, `FEED_FINGERPRINT` and
/// `FEED_DIR` in its environment. Hooks run one at a time, in publish order, on their own
/// queue, so the response never waits; their output and failures go to the log.
final class PublishHook: Sendable {
    let command: String
    private let queue = DispatchQueue(label: "feed-server.on-publish")

    init(command: String) {
        self.command = command
    }

    /// Schedules the hook for one publish.
    func run(for event: PublishEvent) {
        queue.async { [command] in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            var environment = ProcessInfo.processInfo.environment
            environment["FEED_GROUP"] = event.group
            environment["FEED_GENERATION_ID"] = event.generationId
            environment["FEED_FINGERPRINT"] = event.fingerprint
            environment["FEED_DIR"] = URL(fileURLWithPath: event.directory).standardizedFileURL.path
            // Set only when the change is a fault-lab injection, so a hook can tell (docs/recipes.md).
            if let fault = event.fault { environment["FEED_FAULT"] = fault }
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            do {
                try process.run()
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                    AccessLog.message("on-publish \(event.group)/\(event.generationId): \(line)")
                }
                if process.terminationStatus != 0 {
                    AccessLog.message("on-publish \(event.group)/\(event.generationId): failed with exit status \(process.terminationStatus)")
                }
            } catch {
                AccessLog.message("on-publish \(event.group)/\(event.generationId): could not start /bin/sh: \(error)")
            }
        }
    }
}
