import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `feed-server publish` and `lint` as users run them: the real binary on real files, its
/// answers held against the server's own.
@Suite struct StoreCommandTests {
    static let photo = try! TestImages.jpeg(width: 1600, height: 1200)
    static let quotes = #"{"quotes":[{"id":"q1","text":"Carpe diem","image":"q1.jpg"}],"emptyText":""}"#

    /// A file of `text` in `scratch`.
    static func file(_ scratch: ScratchDirectory, _ name: String, _ text: String) throws -> String {
        let path = scratch.path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A seed-layout group folder `g` naming `q1.jpg` (and whatever else `payload` names).
    static func folder(payload: String = quotes, meta: String? = nil) throws -> SeedTests.Seed {
        let seed = SeedTests.Seed()
        try seed.write("g", "payload.json", payload)
        if let meta { try seed.write("g", "meta.json", meta) }
        try seed.write("g", "assets/q1.jpg", photo)
        return seed
    }

    @Test func publishPrintsTheAnswerPutGivesAndCreatesTheRoot() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/not/yet/there"
        let payload = try Self.file(scratch, "payload.json", #"{"quotes":[{"id":"q1","text":"Carpe diem"}]}"#)
        let first = try CommandRun.run(["publish", "--root", root, "quotes", payload])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.json["result"] as? String == "published")
        #expect(first.stderr.contains("feed-server publish: group 'quotes' published generation"))
        try withTestServer(root: root) { _, client in
            let put = try client.put("/feeds/quotes", json: #"{"quotes":[{"id":"q1","text":"Carpe diem"}]}"#)
            #expect(put.status == 200)
            // Options after the operands, the root from where the server has it.
            let again = try CommandRun.run(["publish", "quotes", payload, "--root", root])
            #expect(again.status == 0)
            #expect(again.stdout == Data(put.body), "the answer PUT gives, byte for byte")
            #expect(again.json["generationId"] as? String == first.json["generationId"] as? String)
        }
        // And from the environment, as the server takes it.
        let environment = try CommandRun.run(["publish", "quotes", payload], environment: ["FEED_SERVER_ROOT": root])
        #expect(environment.json["result"] as? String == "unchanged")
    }

    /// A folder is read and packed as `--seed` reads and packs it: the same fingerprint,
    /// `meta.json`'s schema version, the image downsampled by the default budget.
    @Test func aFolderPublishesAsTheSeedPublishesIt() throws {
        let seed = try Self.folder(meta: #"{"schemaVersion":2}"#)
        let scratch = ScratchDirectory()
        let run = try CommandRun.run(["publish", "--root", scratch.path, "other", seed.path + "/g"])
        #expect(run.status == 0, "\(run.stderr)")
        let asset = try #require((run.json["assets"] as? [[String: Any]])?.first)
        #expect(asset["name"] as? String == "q1.jpg")
        #expect(asset["width"] as? Int == 512 && asset["height"] as? Int == 384)
        #expect((run.json["warnings"] as? [Any])?.isEmpty == true)
        try withTestServer(configure: { $0.seed = seed.path }) { _, client in
            let served = try client.get("/feeds/g").json
            #expect(served["fingerprint"] as? String == run.json["fingerprint"] as? String)
            #expect(served["schemaVersion"] as? Int == 2)
        }
        let overridden = try CommandRun.run([
            "publish", "--schema-version", "3", "--root", scratch.path, "other", seed.path + "/g",
        ])
        #expect(overridden.json["result"] as? String == "published")
        let read = try CommandRun.run(["read", "--root", scratch.path, "other"])
        #expect((read.json["served"] as? [String: Any])?["schemaVersion"] as? Int == 3)
    }

    /// The Simulator recipe (docs/recipes.md): the App Group container as ROOT and WidgetBridge's
    /// `directoryName` as GROUP give the folder WidgetBridge reads, `<container>/widgetbridge`,
    /// and nothing else beside it.
    @Test func anAppGroupContainerGetsExactlyTheFolderWidgetBridgeReads() throws {
        let seed = try Self.folder()
        let scratch = ScratchDirectory()
        let container = scratch.path + "/Shared/AppGroup/5F1C"
        try FileManager.default.createDirectory(atPath: container, withIntermediateDirectories: true)
        let run = try CommandRun.run(["publish", "--root", container, "widgetbridge", seed.path + "/g"])
        #expect(run.status == 0, "\(run.stderr)")
        let id = try #require(run.json["generationId"] as? String)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container) == ["widgetbridge"])
        let folder = container + "/widgetbridge"
        #expect(ReferenceReader.read(group: folder, schemaVersion: 1).served == id)
        #expect(FileManager.default.fileExists(atPath: folder + "/generations/\(id)/assets/q1.jpg"))
    }

    @Test func aRefusedPublishExitsWithStatus1WithTheProblemAndWritesNothing() throws {
        let seed = try Self.folder(payload: #"{"image":"q1.jpg","moon":"moon.png"}"#)
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let strict = try CommandRun.run(["publish", "--strict", "--root", root, "g", seed.path + "/g"])
        #expect(strict.status == 1)
        #expect((strict.json["type"] as? String)?.hasSuffix("/platform-limits") == true)
        #expect((strict.json["warnings"] as? [[String: Any]])?.first?["code"] as? String == "asset-not-found")
        #expect(strict.stderr.contains("group 'g' refused (422 platform-limits)"), "\(strict.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/g/current.json"))
        let invalid = try CommandRun.run(["publish", "--root", root, "g", try Self.file(scratch, "bad.json", "[1,]")])
        #expect(invalid.status == 1)
        #expect((invalid.json["type"] as? String)?.hasSuffix("/invalid-json") == true)
        try FileManager.default.removeItem(atPath: seed.path + "/g/payload.json")
        let empty = try CommandRun.run(["publish", "--root", root, "g", seed.path + "/g"])
        #expect(empty.status == 1)
        #expect((empty.json["type"] as? String)?.hasSuffix("/unpublishable-source") == true)
        #expect((empty.json["detail"] as? String)?.contains("g/payload.json is missing") == true)
        #expect(!FileManager.default.fileExists(atPath: root + "/g/current.json"))
    }

    @Test func lintPrintsTheWarningsAndFailsOnlyWhenStrict() throws {
        let warned = try Self.folder(payload: #"{"image":"q1.jpg","moon":"moon.png","sun":"sun.png"}"#)
        let lenient = try CommandRun.run(["lint", warned.path + "/g"])
        #expect(lenient.status == 0, "\(lenient.stderr)")
        let codes = (lenient.json["warnings"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
        #expect(codes == ["asset-not-found", "asset-not-found"])
        let lines = lenient.stderr.split(separator: "\n").filter { $0.contains(": warning asset-not-found: ") }
        #expect(lines.count == 2, "one line per warning: \(lenient.stderr)")
        #expect(try CommandRun.run(["lint", warned.path + "/g", "--strict"]).status == 1)
        let clean = try Self.folder()
        let strictClean = try CommandRun.run(["lint", "--strict", clean.path + "/g"])
        #expect(strictClean.status == 0, "\(strictClean.stderr)")
        #expect((strictClean.json["warnings"] as? [Any])?.isEmpty == true)
        // What the store would refuse is no lint pass.
        let scratch = ScratchDirectory()
        let invalidPath = try Self.file(scratch, "payload.json", #"{"a":1,"a":2}"#)
        let invalid = try CommandRun.run(["lint", invalidPath])
        #expect(invalid.status == 1)
        #expect((invalid.json["type"] as? String)?.hasSuffix("/invalid-json") == true)
        // A loop over fixtures reads stderr only: the refusal names the one refused.
        #expect(invalid.stderr.contains("'\(invalidPath)' refused (400 invalid-json)"), "\(invalid.stderr)")
        // Nothing was written anywhere: lint takes no root.
        #expect(!FileManager.default.fileExists(atPath: clean.path + "/g/current.json"))
    }

    /// The command publishes under the group's lock, as the server does: a lock another
    /// process holds (a server publishing) holds it back, and it goes on once released.
    @Test func publishWaitsForTheGroupLock() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try FileManager.default.createDirectory(atPath: root + "/g", withIntermediateDirectories: true)
        let lock = try PosixFileSystem().lockExclusive(root + "/g/publish.lock")
        let payload = try Self.file(scratch, "payload.json", "[1]")
        let child = try ChildServer(arguments: ["publish", "--root", root, "g", payload])
        usleep(500_000)
        #expect(child.process.isRunning, "a publish under a held lock must wait")
        #expect(!FileManager.default.fileExists(atPath: root + "/g/current.json"))
        lock.unlock()
        #expect(child.waitForExit() == 0, "\(child.output)")
        #expect(FileManager.default.fileExists(atPath: root + "/g/current.json"))
    }

    @Test func usageMistakesExitWithStatus2() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let payload = try Self.file(scratch, "payload.json", "[1]")
        let cases: [([String], String)] = [
            (["publish"], "takes GROUP PATH"),
            (["publish", "--root", root, "g"], "takes GROUP PATH"),
            (["publish", "--root", root, "g", scratch.path + "/missing.json"], "does not exist"),
            (["publish", "--root", root, "..", payload], "GROUP '..'"),
            (["publish", "--bogus", "g", payload], "unknown option '--bogus'"),
            (["publish", "--port", "8080", "g", payload], "unknown option '--port'"),
            (["publish", "--root", "--strict", "g", payload], "--root needs a value"),
            (["lint", "--images", "maybe", payload], "--images must be pack or raw"),
            (["read", "--root", scratch.path + "/nowhere", "g"], "does not exist or is not a folder"),
            (["export", "--schema-version", "x", "g"], "--schema-version must be an integer"),
        ]
        for (arguments, message) in cases {
            let run = try CommandRun.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(run.stderr.hasPrefix("feed-server \(arguments[0]): "), "\(arguments): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: root), "no root made by a refused command line")
    }

    @Test func everyCommandHasItsHelp() throws {
        for name in StoreCommand.Name.allCases {
            let help = try CommandRun.run([name.rawValue, "--help"])
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("Usage: feed-server \(name.rawValue) [options]"), "\(help.output)")
            #expect(help.output.contains("Exit status:"))
            #expect(help.output.split(separator: "\n").allSatisfy { !$0.hasPrefix("  --port") })
        }
        #expect(try CommandRun.run(["publish", "g", "x", "-h"]).output.contains("--strict"))
        let server = try CommandRun.run(["--help"])
        #expect(server.output.contains("feed-server publish|lint|read|export"))
    }
}
