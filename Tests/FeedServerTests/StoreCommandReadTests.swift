import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `feed-server read` and `export` against the real binary: what they print is what the
/// server's routes answer for the same root.
@Suite struct StoreCommandReadTests {
    /// Publishes `payload` to `group` with the command; its generation id.
    private func publish(
        _ root: String, _ group: String, _ payload: String, _ scratch: ScratchDirectory
    ) throws -> String {
        let path = try StoreCommandTests.file(scratch, "payload-\(UUID().uuidString).json", payload)
        let run = try CommandRun.run(["publish", "--root", root, group, path])
        #expect(run.status == 0, "\(run.stderr)")
        return run.json["generationId"] as? String ?? ""
    }

    @Test func readSaysWhatReadersGetAndWhatWasSkipped() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let first = try publish(root, "g", #"{"v":1}"#, scratch)
        usleep(2_000)  // generation ids are by millisecond
        let second = try publish(root, "g", #"{"v":2}"#, scratch)
        let plain = try CommandRun.run(["read", "--root", root, "g"])
        #expect(plain.status == 0)
        #expect((plain.json["served"] as? [String: Any])?["generationId"] as? String == second)
        #expect((plain.json["skipped"] as? [Any])?.isEmpty == true)
        // The current generation torn: readers fall back, and the command says why.
        try Data("{\"schemaVersion\":1,".utf8).write(
            to: URL(fileURLWithPath: root + "/g/generations/\(second)/feed.json"))
        let fallback = try CommandRun.run(["read", "g", "--root", root])
        #expect(fallback.status == 0, "\(fallback.stderr)")
        let served = try #require(fallback.json["served"] as? [String: Any])
        #expect(served["generationId"] as? String == first)
        let skipped = try #require((fallback.json["skipped"] as? [[String: Any]])?.first)
        #expect(skipped["id"] as? String == second)
        #expect(skipped["reason"] as? String == "unparsable")
        #expect((skipped["detail"] as? String)?.hasPrefix("feed.json does not parse") == true)
        try withTestServer(root: root) { _, client in
            let read = try client.get("/feeds/g")
            #expect(NSDictionary(dictionary: read.json) == NSDictionary(dictionary: served), "the body GET answers")
            #expect(read.header("X-Feed-Fallback")?.hasPrefix("\(second);reason=unparsable") == true)
        }
        // A reader of another schema version gets nothing; the command says so and exits 1.
        let other = try CommandRun.run(["read", "--schema-version", "7", "--root", root, "g"])
        #expect(other.status == 1)
        #expect(other.json["served"] is NSNull)
        #expect((other.json["skipped"] as? [Any])?.count == 2)
        #expect(other.stderr.contains("Group 'g' has no readable generation with schemaVersion 7."))
    }

    @Test func exportSendsWhatTheRouteSendsAndPublishTakesItBack() throws {
        let seed = try StoreCommandTests.folder()
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let published = try CommandRun.run(["publish", "--root", root, "g", seed.path + "/g"])
        #expect(published.status == 0, "\(published.stderr)")
        let export = try CommandRun.run(["export", "--root", root, "g"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.isEmpty)
        try withTestServer(root: root) { _, client in
            let archive = try client.get("/feeds/g/archive")
            #expect(archive.status == 200)
            #expect(Data(archive.body) == export.stdout, "the tar GET /feeds/{group}/archive sends, byte for byte")
        }
        let tar = scratch.path + "/g.tar"
        try export.stdout.write(to: URL(fileURLWithPath: tar))
        let restored = try CommandRun.run(["publish", "--root", root, "copy", tar])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.json["fingerprint"] as? String == published.json["fingerprint"] as? String)
        // A tar without a tar's name is known by its header.
        let unnamed = scratch.path + "/state"
        try export.stdout.write(to: URL(fileURLWithPath: unnamed))
        let again = try CommandRun.run(["publish", "--root", root, "copy", unnamed])
        #expect(again.json["result"] as? String == "unchanged", "\(again.output)")
    }

    @Test func nothingToReadOrExportExitsWithStatus1() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let read = try CommandRun.run(["read", "--root", root, "none"])
        #expect(read.status == 1)
        #expect(read.json["group"] as? String == "none")
        #expect(read.json["served"] is NSNull)
        let export = try CommandRun.run(["export", "--root", root, "none"])
        #expect(export.status == 1)
        #expect(export.stdout.isEmpty)
        #expect(export.stderr.contains("has no readable generation to export"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty, "a read writes nothing")
    }
}
