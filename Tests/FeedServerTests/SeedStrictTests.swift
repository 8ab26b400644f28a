import FeedImagingTesting
import Foundation
import Testing

/// The platform-limit warnings of seed and watch publishes in the log, and `--seed-strict`,
/// against the real binary (the log is its stderr).
@Suite struct SeedStrictTests {
    /// Waits until `child`'s output holds `text`.
    private func waitFor(_ text: String, in child: ChildServer, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !child.output.contains(text), Date() < deadline { usleep(20_000) }
        return child.output.contains(text)
    }

    /// Replaces `path` with `text` in one rename, as editors save.
    private func save(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + ".new"))
        _ = rename(path + ".new", path)
    }

    @Test func everySeedPublishLogsItsWarningsOneLineEach() throws {
        let seed = SeedTests.Seed()
        // A bidirectional override in a payload string must not reach the terminal as it is.
        try seed.write("g", "payload.json", "{\"a\":\"moon.png\",\"b\":\"sun\u{202E}gnp.png\"}")
        let scratch = ScratchDirectory()
        for _ in 0..<2 {  // the second start finds the group unchanged, and warns again
            let child = try ChildServer(arguments: [
                "--port", "0", "--root", scratch.path + "/data", "--seed", seed.path, "--access-log", "off",
            ])
            _ = try child.waitForPort()
            child.signal(SIGTERM)
            #expect(child.waitForExit() == 0)
            let warnings = child.output.split(separator: "\n").filter {
                $0.hasPrefix("feed-server: seed: group 'g': warning asset-not-found: ")
            }
            #expect(warnings.count == 2, "\(child.output)")
            #expect(child.output.contains("sun%E2%80%AEgnp.png"), "\(child.output)")
            #expect(!child.output.contains("\u{202E}"))
        }
    }

    @Test func anEmptySeedFolderSaysNothingWasSeeded() throws {
        let scratch = ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/seed", withIntermediateDirectories: true)
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--seed", scratch.path + "/seed", "--access-log", "off",
        ])
        _ = try child.waitForPort()
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        #expect(child.output.contains("feed-server: seed: the folder holds no group"), "\(child.output)")
        #expect(child.output.contains("nothing seeded"))
    }

    @Test func seedStrictRefusesAGroupWithWarningsAndStopsTheStart() throws {
        let seed = SeedTests.Seed()
        try seed.write("clean", "payload.json", #"{"v":1}"#)
        try seed.write("warned", "payload.json", #"{"image":"missing.png"}"#)
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", root, "--seed", seed.path, "--seed-strict", "--access-log", "off",
        ])
        #expect(child.waitForExit() == 2, "\(child.output)")
        #expect(child.output.contains("seed: group 'warned': warning asset-not-found: "))
        #expect(child.output.contains("seed: group 'warned' refused: --seed-strict and 1 platform-limit warning(s)"))
        #expect(child.output.contains("--seed-strict: 1 group(s) of '\(seed.path)' not published: 'warned'"))
        #expect(!child.output.contains("listening on"))
        #expect(FileManager.default.fileExists(atPath: root + "/clean/current.json"))
        #expect(
            !FileManager.default.fileExists(atPath: root + "/warned/current.json"), "a refused group is not written")

        // A broken group is no more acceptable than a warned one under strict.
        try seed.write("warned", "payload.json", #"{"image":"#)
        let broken = try ChildServer(arguments: ["--port", "0", "--root", root, "--seed", seed.path, "--seed-strict"])
        #expect(broken.waitForExit() == 2)
        #expect(broken.output.contains("'warned' (skipped, see above)"), "\(broken.output)")

        try seed.write("warned", "payload.json", #"{"v":2}"#)
        let fixed = try ChildServer(arguments: ["--port", "0", "--root", root, "--seed", seed.path, "--seed-strict"])
        _ = try fixed.waitForPort()
        fixed.signal(SIGTERM)
        #expect(fixed.waitForExit() == 0)
    }

    /// Under `--watch` the server is running: a refused edit is logged and the last good feed
    /// stays served, as for a broken edit.
    @Test func underWatchAStrictRefusalKeepsTheLastGoodFeed() throws {
        let seed = SeedTests.Seed()
        try seed.write("g", "payload.json", #"{"v":1}"#)
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--seed", seed.path, "--watch", "--seed-strict",
            "--access-log", "off", "--shutdown-timeout", "2",
        ])
        let client = HTTPTestClient(port: try child.waitForPort())
        func value() throws -> Int? { (try client.get("/feeds/g").json["payload"] as? [String: Any])?["v"] as? Int }
        #expect(try value() == 1)
        try save(seed.path + "/g/payload.json", #"{"v":2,"image":"missing.png"}"#)
        #expect(waitFor("watch: group 'g': warning asset-not-found: ", in: child), "\(child.output)")
        #expect(
            waitFor("watch: group 'g' refused: --seed-strict and 1 platform-limit warning(s); generation ", in: child))
        #expect(try value() == 1)
        try save(seed.path + "/g/payload.json", #"{"v":3}"#)
        #expect(waitFor("watch: group 'g' published generation", in: child), "\(child.output)")
        #expect(try value() == 3)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }
}
