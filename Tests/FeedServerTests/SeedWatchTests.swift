import ConcurrencyPrimitives
import FeedImaging
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `--seed` and `--watch` when the seed folder holds what no editor leaves: FIFOs, hidden
/// folders, names with control characters; and a watcher that must not hold up shutdown.
@Suite struct SeedWatchTests {
    /// Runs an action once, the first time the watched folder is about to open a given path
    /// after `arm`.
    final class Hook: @unchecked Sendable {
        private let lock = NSLock()
        private var armed: (path: String, action: () -> Void)?

        func arm(at path: String, _ action: @escaping () -> Void) {
            lock.lock()
            armed = (path, action)
            lock.unlock()
        }

        func opening(_ path: String) {
            lock.lock()
            let action = armed?.path == path ? armed?.action : nil
            if action != nil { armed = nil }
            lock.unlock()
            action?()
        }
    }

    /// A watcher of the test's own over `seed`, publishing into `server`'s store (the server's
    /// options cannot carry the hook); its groups are published first, as at start.
    private func watcher(_ server: Server, _ seed: SeedTests.Seed, _ hook: Hook) throws -> SeedWatcher {
        let publisher = SeedPublisher(
            folder: SeedFolder(path: seed.path, beforeOpening: { hook.opening($0) }), store: server.store,
            encoder: try VipsImageEncoder(), threads: 2, maxAssets: 16, maxAssetBytes: 16 << 20)
        try publisher.publishAll()
        let watcher = try SeedWatcher(publisher: publisher, debounceMillis: 50)
        try watcher.start()
        return watcher
    }

    /// The payload's `v` served for `group`, waiting up to `seconds` for `expected`.
    private func served(
        _ client: HTTPTestClient, _ group: String, becomes expected: Int, within seconds: Double
    ) throws -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        var value: Int?
        repeat {
            value = (try client.get("/feeds/\(group)").json["payload"] as? [String: Any])?["v"] as? Int
            if value == expected { return value }
            usleep(20_000)
        } while Date() < deadline
        return value
    }

    /// Replaces `path` by a regular file holding `text` with one rename (writing through the
    /// path would open a FIFO there and wait for a reader).
    private func replace(_ path: String, with text: String) throws {
        let temporary = path + ".new~"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, path) == 0)
    }

    /// A payload swapped for a FIFO between the watcher's check and its open must neither stop
    /// later edits from being published nor keep the watcher from stopping: an open that waited
    /// for a writer would wait for good. The hook makes the swap at that very point; a hard link
    /// keeps the FIFO reachable so that a watcher stuck on it could be released at the end
    /// instead of hanging the test run.
    @Test func aPayloadSwappedForAFIFOMidRepublishIsSkippedAndLaterEditsPublish() throws {
        let seed = SeedTests.Seed()
        try seed.write("g", "payload.json", #"{"v":1}"#)
        let payload = seed.path + "/g/payload.json"
        let kept = seed.scratch.path + "/fifo"
        let hook = Hook()
        let swapped = DispatchSemaphore(value: 0)
        try withTestServer { server, client in
            let watcher = try watcher(server, seed, hook)
            defer {
                let writer = open(kept, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if writer >= 0 { close(writer) }
                watcher.stop(until: MonotonicClock.nanos() + 5_000_000_000)
            }
            #expect(try served(client, "g", becomes: 1, within: 5) == 1)
            hook.arm(at: "g/payload.json") {
                unlink(payload)
                precondition(mkfifo(payload, 0o644) == 0 && link(payload, kept) == 0)
                swapped.signal()
            }
            try replace(payload, with: #"{"v":2}"#)
            #expect(swapped.wait(timeout: .now() + 10) == .success, "the watcher republished")
            try replace(payload, with: #"{"v":3}"#)
            #expect(try served(client, "g", becomes: 3, within: 10) == 3, "an edit after the FIFO is published")
            let start = MonotonicClock.nanos()
            watcher.stop(until: start + 2_000_000_000)
            #expect(MonotonicClock.nanos() - start < 2_500_000_000)
        }
    }

    /// Shutdown gives the watcher until its deadline and no longer, so that a republish held up
    /// (here by the hook, standing for a slow read or a big image) cannot keep SIGTERM from
    /// ending the server.
    @Test func stoppingDoesNotWaitPastItsDeadlineForARepublishInProgress() throws {
        let seed = SeedTests.Seed()
        try seed.write("g", "payload.json", #"{"v":1}"#)
        let hook = Hook()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        try withTestServer { server, client in
            let watcher = try watcher(server, seed, hook)
            hook.arm(at: "g/payload.json") {
                entered.signal()
                _ = release.wait(timeout: .now() + 20)
            }
            try replace(seed.path + "/g/payload.json", with: #"{"v":2}"#)
            #expect(entered.wait(timeout: .now() + 10) == .success, "the watcher republished")
            let start = MonotonicClock.nanos()
            watcher.stop(until: start + 300_000_000)
            #expect(MonotonicClock.nanos() - start < 1_500_000_000, "stop waited for the republish")
            release.signal()
            // The republish in progress ends as it would have; nothing after it starts.
            #expect(try served(client, "g", becomes: 2, within: 10) == 2)
        }
    }

    /// The real command: SIGTERM ends a watching server within its shutdown timeout, status 0,
    /// with a FIFO in the seed folder, and a FIFO in a payload's place is logged and skipped.
    @Test func sigtermEndsAWatchingServerWithFIFOsInItsSeedFolder() throws {
        let seed = SeedTests.Seed()
        try seed.write("g", "payload.json", #"{"v":1}"#)
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--seed", seed.path, "--watch", "--access-log", "off",
            "--shutdown-timeout", "2",
        ])
        let client = HTTPTestClient(port: try child.waitForPort())
        func value() throws -> Int? { (try client.get("/feeds/g").json["payload"] as? [String: Any])?["v"] as? Int }
        func waitFor(_ text: String) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while !child.output.contains(text), Date() < deadline { usleep(20_000) }
            return child.output.contains(text)
        }
        #expect(try value() == 1)
        let payload = seed.path + "/g/payload.json"
        unlink(payload)
        #expect(mkfifo(payload, 0o644) == 0)
        #expect(waitFor("watch: group 'g' skipped: g/payload.json is not a regular file"))
        try replace(payload, with: #"{"v":2}"#)
        #expect(waitFor("watch: group 'g' published"))
        #expect(try value() == 2)
        try FileManager.default.createDirectory(atPath: seed.path + "/g/assets", withIntermediateDirectories: true)
        #expect(mkfifo(seed.path + "/g/assets/late.jpg", 0o644) == 0)
        #expect(waitFor("g/assets/late.jpg is not a regular file"))
        child.signal(SIGTERM)
        #expect(child.waitForExit(timeout: 5) == 0, "\(child.output)")
    }

    /// Whoever names a seed folder's entries, or writes a payload whose refusal quotes it (a
    /// duplicate member's name), must not be able to write a line of their choosing into the
    /// start-up log: every seed line stays one line, the names in it escaped.
    @Test func namesAndReasonsWithControlCharactersLogOneLineEach() throws {
        let seed = SeedTests.Seed()
        let forged = "feed-server: seed: group 'forged' published generation 1"
        try seed.write("good", "payload.json", "{}")
        try FileManager.default.createDirectory(
            atPath: seed.path + "/evil\n" + forged, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: seed.path + "/bell\u{7}\u{1B}[2J"))
        try seed.write("dup", "payload.json", #"{"k\n\#(forged)":1,"k\n\#(forged)":2}"#)
        try seed.write("asset", "payload.json", "{}")
        try seed.write("asset", "assets/x\n\(forged).jpg", "x")
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--seed", seed.path, "--access-log", "off",
        ])
        _ = try child.waitForPort()
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        let lines = child.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.hasPrefix("feed-server"), "a line no seed message starts: \(line)")
            #expect(!line.hasPrefix(forged), "a forged line: \(line)")
            #expect(!line.contains("\u{1B}") && !line.contains("\u{7}"), "a control character: \(line)")
        }
        let output = child.output
        #expect(output.contains("seed: 'evil%0A\(forged)' skipped: it is not a usable group name"), "\(output)")
        #expect(output.contains("seed: 'bell%07%1B[2J' skipped: it is not a folder"), "\(output)")
        #expect(output.contains("group 'dup' skipped:") && output.contains("k%0A\(forged)"), "\(output)")
        #expect(output.contains("asset name 'x%0A\(forged).jpg'"), "\(output)")
        #expect(output.contains("seed: group 'good' published"))
    }

    /// WidgetBridge's own reader skips hidden entries: a hidden folder is published neither at
    /// start nor when it appears while watching, although `.hidden-group` is a safe group name.
    @Test func hiddenFoldersAreNeverSeededAsGroups() throws {
        let seed = SeedTests.Seed()
        try seed.write(".hidden-group", "payload.json", "{}")
        try seed.write("visible", "payload.json", "{}")
        try withTestServer(configure: {
            $0.seed = seed.path
            $0.watch = true
        }) { (server: Server, client: HTTPTestClient) throws in
            #expect(server.store.groups() == ["visible"])
            // Written first, so republished no later than the folder after it.
            try seed.write(".hidden-later", "payload.json", "{}")
            try seed.write("visible-later", "payload.json", "{}")
            var later = try client.get("/feeds/visible-later")
            let deadline = Date().addingTimeInterval(20)
            while later.status == 404, Date() < deadline {
                usleep(20_000)
                later = try client.get("/feeds/visible-later")
            }
            #expect(later.status == 200)
            #expect(server.store.groups() == ["visible", "visible-later"])
            #expect(try client.get("/feeds/.hidden-group").status == 400, "no group name starts with '.'")
        }
    }
}
