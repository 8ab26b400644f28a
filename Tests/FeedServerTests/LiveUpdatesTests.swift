import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// Long-poll waits (suspended connections, our own deadlines) and the on-publish hook.
@Suite struct LiveUpdatesTests {
    @Test func aWaitEndsWithTheNewFeedWhenAPublishHappens() throws {
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let publisher = Thread {
                usleep(300_000)
                _ = try? HTTPTestClient(port: server.port).put("/feeds/g", json: "[2]")
            }
            let started = Date()
            publisher.start()
            let response = try client.get("/feeds/g?wait=20", headers: [("If-None-Match", tag)])
            let elapsed = Date().timeIntervalSince(started)
            #expect(response.status == 200)
            #expect(response.json["payload"] as? [Int] == [2])
            #expect(elapsed > 0.25 && elapsed < 10, "held until the publish, not until the deadline (\(elapsed) s)")
        }
    }

    @Test func aWaitTimesOutWith304AndAStaleTagAnswersAtOnce() throws {
        try withTestServer { _, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let started = Date()
            let timedOut = try client.get("/feeds/g?wait=0.5", headers: [("If-None-Match", tag)])
            let elapsed = Date().timeIntervalSince(started)
            #expect(timedOut.status == 304)
            #expect(elapsed >= 0.5 && elapsed < 5, "\(elapsed) s")
            let stale = try client.get("/feeds/g?wait=30", headers: [("If-None-Match", "\"old\"")])
            #expect(stale.status == 200)
            #expect(try client.get("/feeds/g?wait=abc", headers: [("If-None-Match", tag)]).status == 400)
        }
    }

    @Test func threeHundredWaitersHeldByTwoThreadsAllWakeOnOnePublish() throws {
        try withTestServer(configure: { $0.transport.threads = 2 }) { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let threadsBefore = try threadCount()
            let connections = try (0..<300).map { _ in try HTTPTestConnection(port: server.port) }
            for connection in connections {
                try connection.sendRaw(
                    Array("GET /feeds/g?wait=30 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n".utf8))
            }
            try waitUntil { try client.get("/metrics").text.contains("feedserver_open_waiters 300") }
            // The count is the test process's, and the tests running beside this one start and stop
            // servers of their own (about ten threads each): a margin of 100 keeps them out, and a
            // thread per parked request would still add 300.
            let threadsAfter = try threadCount()
            #expect(
                threadsAfter - threadsBefore < 100,
                "parked requests hold no thread (\(threadsBefore) → \(threadsAfter))")
            // Another process (a separate store on the same root) publishes: no notification, the
            // watcher notices the new current.json.
            _ = try FeedStore(root: server.options.root).publish(group: "g", payloadJSON: Array("[2]".utf8))
            var statuses: [Int: Int] = [:]
            for connection in connections { statuses[try connection.readResponse().status, default: 0] += 1 }
            #expect(statuses == [200: 300])
            #expect(try client.get("/metrics").text.contains("feedserver_open_waiters 0"))
        }
    }

    @Test func shutdownAnswersParkedRequests() throws {
        // The body shuts the server down itself; the helper's own shutdown is then a no-op.
        try withTestServer { server, client in
            let tag = try #require(try client.put("/feeds/g", json: "[1]").header("ETag"))
            let connection = try HTTPTestConnection(port: server.port)
            try connection.sendRaw(
                Array("GET /feeds/g?wait=60 HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\n\r\n".utf8))
            try waitUntil { try client.get("/metrics").text.contains("feedserver_open_waiters 1") }
            let started = Date()
            server.shutdown(timeoutSeconds: 5)
            #expect(try connection.readResponse().status == 304)
            #expect(Date().timeIntervalSince(started) < 5)
        }
    }

    @Test func theHookRunsWithTheGenerationsEnvironmentAndNotForUnchanged() throws {
        let scratch = ScratchDirectory()
        let log = scratch.path + "/hook.log"
        let command = #"echo "$FEED_GROUP $FEED_GENERATION_ID $FEED_FINGERPRINT $FEED_DIR" >> "# + log
        try withTestServer(configure: { $0.onPublish = command }) { server, client in
            let first = try client.put("/feeds/g", json: "[1]")
            _ = try client.put("/feeds/g", json: "[1]")
            let second = try client.put("/feeds/g", json: "[2]")
            try waitUntil {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
            }
            usleep(300_000)  // an unchanged publish would have appended a third line by now
            let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            for (line, response) in zip(lines, [first, second]) {
                let id = try #require(response.json["generationId"] as? String)
                let fingerprint = try #require(response.json["fingerprint"] as? String)
                let root = URL(fileURLWithPath: server.options.root).standardizedFileURL.path
                #expect(line == "g \(id) \(fingerprint) \(root)/g/generations/\(id)")
            }
        }
    }

    @Test func theHookStartsWithNoSignalBlockedOrIgnoredAndItsOutputAndFailureAreLogged() throws {
        // The real binary: it blocks its stop signals and ignores SIGPIPE, and a hook must get
        // neither (a shell script that cannot be stopped, or a pipeline that never sees SIGPIPE).
        let scratch = ScratchDirectory()
        // Shell built-ins only: a forking shell blocks every signal for a moment around fork,
        // so another process reading its status could see that instead.
        let command =
            #"while read -r line; do case $line in SigBlk*|SigIgn*) echo "$line";; esac; done < /proc/$$/status; exit 3"#
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path, "--access-log", "off", "--on-publish", command,
        ])
        let client = HTTPTestClient(port: try child.waitForPort())
        let id = try #require(try client.put("/feeds/g", json: "[1]").json["generationId"] as? String)
        let prefix = "on-publish g/\(id): "
        try waitUntil { child.output.contains(prefix + "failed with exit status 3") }
        for field in ["SigBlk", "SigIgn"] {
            let line = try #require(child.output.split(separator: "\n").first { $0.hasPrefix(prefix + field + ":\t") })
            let mask = try #require(UInt64(line.split(separator: "\t").last ?? "", radix: 16))
            // Signals 1 to 31; 32 and 33 belong to glibc itself and stay as they are.
            #expect(mask & 0x7fff_ffff == 0, "\(line)")
        }
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }
    @Test func theHookGetsTheServersEnvironmentWithoutItsTokens() throws {
        // The real binary, with both tokens in its environment (how compose files and containers
        // pass them) and the hook printing every variable it got.
        let scratch = ScratchDirectory()
        let (write, read) = ("wr-env-5Tq9", "rd-env-8Kp3")
        let child = try ChildServer(
            arguments: ["--port", "0", "--root", scratch.path, "--on-publish", "env; echo hook-done"],
            environment: [
                "FEED_SERVER_TOKEN": write, "FEED_SERVER_READ_TOKEN": read, "FEED_SERVER_ACCESS_LOG": "off",
                "HOOK_TEST_OWN": "kept",
            ])
        let client = HTTPTestClient(port: try child.waitForPort())
        let published = try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer " + write)])
        let id = try #require(published.json["generationId"] as? String)
        let prefix = "on-publish g/\(id): "
        // The hook's lines are relayed in order: after the last, every variable is there.
        try waitUntil { child.output.contains(prefix + "hook-done") }
        let variables = child.output.split(separator: "\n").filter { $0.hasPrefix(prefix) }
            .map { String($0.dropFirst(prefix.count)) }
        let names = Set(variables.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        #expect(!names.contains("FEED_SERVER_TOKEN") && !names.contains("FEED_SERVER_READ_TOKEN"), "\(names)")
        #expect(!child.output.contains(write) && !child.output.contains(read), "no token value anywhere")
        #expect(variables.contains { $0.hasPrefix("PATH=/") }, "\(variables)")
        #expect(variables.contains("HOOK_TEST_OWN=kept") && variables.contains("FEED_SERVER_ACCESS_LOG=off"))
        #expect(variables.contains("FEED_GROUP=g") && variables.contains("FEED_GENERATION_ID=\(id)"))
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    @Test func onlyTheServersTokenVariablesAreKeptFromTheHook() {
        for name in ["FEED_SERVER_TOKEN", "FEED_SERVER_READ_TOKEN", "FEED_SERVER_ADMIN_TOKEN"] {
            #expect(!ShellCommand.passesOn(name), "\(name)")
        }
        for name in ["PATH", "HOME", "FEED_SERVER_ROOT", "FEED_SERVER_TOKEN_FILE", "GITHUB_TOKEN", "feed_server_token"]
        {
            #expect(ShellCommand.passesOn(name), "\(name)")
        }
    }
}

/// Threads of this process (the server runs in it): the entries of /proc/self/task.
func threadCount() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
}

/// Polls `condition` every 20 ms for up to `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return }
        usleep(20_000)
    }
    throw HTTPTestError(description: "condition not met within \(seconds) s")
}
