import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `--seed` and `--watch` against the real server, with real files and images.
@Suite struct SeedTests {
    static let photo = try! TestImages.jpeg(width: 1600, height: 1200)

    /// A seed folder with group folders written by hand.
    final class Seed {
        let scratch = ScratchDirectory("seed")
        var path: String { scratch.path + "/seed" }

        /// Writes `DIR/<group>/<relative>` (folders made as needed).
        func write(_ group: String, _ relative: String, _ bytes: [UInt8]) throws {
            let file = path + "/" + group + "/" + relative
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        }

        func write(_ group: String, _ relative: String, _ text: String) throws {
            try write(group, relative, Array(text.utf8))
        }
    }

    /// The libvips workers that seeding at start-up leaves behind (reused by later publishes) run
    /// ten nice levels below the server, as every image thread does, so a reader gets a core first.
    @Test func imageWorkersStartedBySeedingRunTenNiceLevelsDown() throws {
        let seed = Seed()
        try seed.write("g", "payload.json", #"{"quotes":[{"id":"q1","image":"q1.jpg"}]}"#)
        try seed.write("g", "assets/q1.jpg", Self.photo)
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: [
            "--port", "0", "--root", scratch.path + "/data", "--seed", seed.path, "--access-log", "off",
        ])
        _ = try child.waitForPort()
        let tasks = "/proc/\(child.process.processIdentifier)/task"
        let lowered = min(19, getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) + 10)
        var workers = 0
        for thread in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard
                (try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8))?.hasPrefix("libvips") == true
            else { continue }
            // A surplus pool worker may end between the two reads: only one still there counts.
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8) else { continue }
            workers += 1
            // stat's fields after the name's closing parenthesis start at field 3; nice is field 19,
            // the policy field 41.
            let fields = try #require(stat.range(of: ")", options: .backwards)).upperBound
            let values = stat[fields...].split(separator: " ")
            #expect(
                values[38] == "0" && values[16] == "\(lowered)",
                "libvips worker \(thread): \(values[16]), \(values[38])")
        }
        #expect(workers > 0, "seeding an image starts libvips workers")
    }

    private func seeded(
        _ seed: Seed, root: String? = nil, watch: Bool = false, _ body: (Server, HTTPTestClient) throws -> Void
    ) throws {
        try withTestServer(
            root: root,
            configure: {
                $0.seed = seed.path
                $0.watch = watch
            }, body)
    }

    private func served(
        _ client: HTTPTestClient, _ group: String
    ) throws -> (id: String, fingerprint: String, payload: [String: Any])? {
        let response = try client.get("/feeds/\(group)")
        guard response.status == 200 else { return nil }
        let json = response.json
        return (
            json["generationId"] as? String ?? "", json["fingerprint"] as? String ?? "",
            json["payload"] as? [String: Any] ?? [:]
        )
    }

    /// Waits (long-poll, no sleep) until the group serves something other than `entityTag`.
    private func waitForChange(
        _ client: HTTPTestClient, _ group: String, from fingerprint: String
    ) throws -> WireResponse {
        var response = try client.get("/feeds/\(group)?wait=30", headers: [("If-None-Match", "\"\(fingerprint)\"")])
        var rounds = 0
        while response.status == 304, rounds < 3 {
            response = try client.get("/feeds/\(group)?wait=30", headers: [("If-None-Match", "\"\(fingerprint)\"")])
            rounds += 1
        }
        return response
    }

    @Test func seedPublishesEveryGroupAtStartPackedLikeAMultipartPublish() throws {
        let seed = Seed()
        try seed.write("photos", "payload.json", #"{"items":[{"title":"Sunrise","image":"sun.jpg"}]}"#)
        try seed.write("photos", "assets/sun.jpg", Self.photo)
        try seed.write("quotes", "payload.json", #"{ "quotes": [ {"id": "q1"} ] }"#)
        try seed.write("quotes", "meta.json", #"{"schemaVersion": 2}"#)
        try seeded(seed) { _, client in
            let photos = try #require(try served(client, "photos"))
            let feed = try client.get("/feeds/photos").json
            let assets = try #require(feed["assets"] as? [[String: Any]])
            #expect(assets.map { $0["name"] as? String } == ["sun.jpg"])
            // The same files through a multipart publish pack to the same bytes: same fingerprint.
            var body = MultipartBody()
            body.field(
                "payload", #"{"items":[{"title":"Sunrise","image":"sun.jpg"}]}"#, contentType: "application/json")
            body.file("image", filename: "sun.jpg", Self.photo)
            let multipart = try client.putMultipart("/feeds/photos-by-hand", body)
            #expect(multipart.status == 201)
            #expect(multipart.json["fingerprint"] as? String == photos.fingerprint)

            let quotes = try client.get("/feeds/quotes").json
            #expect(quotes["schemaVersion"] as? Int == 2)
            #expect((quotes["payload"] as? [String: Any])?["quotes"] != nil)
        }
    }

    @Test func restartWithAnUnchangedSeedWritesNothing() throws {
        let seed = Seed()
        try seed.write("photos", "payload.json", #"{"image":"sun.jpg"}"#)
        try seed.write("photos", "assets/sun.jpg", Self.photo)
        try seed.write("plain", "payload.json", #"{"a":1}"#)
        let root = seed.scratch.path + "/data"
        var first: [String: String] = [:]
        try seeded(seed, root: root) { _, client in
            for group in ["photos", "plain"] { first[group] = try #require(try served(client, group)).id }
        }
        func snapshot() throws -> [String: [String]] {
            var listing: [String: [String]] = [:]
            for group in ["photos", "plain"] {
                let folder = root + "/" + group
                let pointer = try FileManager.default.attributesOfItem(atPath: folder + "/current.json")
                let generations = try FileManager.default.contentsOfDirectory(atPath: folder + "/generations").sorted()
                listing[group] =
                    generations + [
                        "\(pointer[.systemFileNumber] ?? 0)",
                        "\((pointer[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)",
                    ]
            }
            return listing
        }
        let before = try snapshot()
        try seeded(seed, root: root) { _, client in
            for group in ["photos", "plain"] {
                let id = try served(client, group)?.id
                #expect(id == first[group])
            }
        }
        #expect(try snapshot() == before)
    }

    @Test func aBrokenGroupIsSkippedWhileTheOthersPublish() throws {
        let seed = Seed()
        try seed.write("good", "payload.json", #"{"ok":true}"#)
        try seed.write("bad-json", "payload.json", #"{"ok":"#)
        try seed.write("bad-meta", "payload.json", #"{"ok":true}"#)
        try seed.write("bad-meta", "meta.json", #"{"schemaVersion":"two"}"#)
        try seed.write("no-payload", "assets/sun.jpg", Self.photo)
        try seed.write("also-good", "payload.json", #"[1,2,3]"#)
        // Links are not followed: a payload or asset that is a symbolic link breaks its group.
        try seed.write("secret", "payload.json", #"{"secret":true}"#)
        try FileManager.default.createDirectory(
            atPath: seed.path + "/linked-payload", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: seed.path + "/linked-payload/payload.json", withDestinationPath: seed.path + "/secret/payload.json")
        try seed.write("linked-asset", "payload.json", #"{"image":"sun.jpg"}"#)
        try seed.write("linked-asset", "assets/real.jpg", Self.photo)
        try FileManager.default.createSymbolicLink(
            atPath: seed.path + "/linked-asset/assets/sun.jpg", withDestinationPath: "real.jpg")
        try seeded(seed) { _, client in
            let good = try served(client, "good")
            #expect(good != nil)
            let alsoGood = try client.get("/feeds/also-good")
            #expect(alsoGood.status == 200)
            for group in ["bad-json", "bad-meta", "no-payload", "linked-payload", "linked-asset"] {
                let response = try client.get("/feeds/\(group)")
                #expect(response.status == 404)
            }
        }
    }

    /// A group's assets together are bounded as a multipart body is (--max-body-bytes): each
    /// file within it is not enough (seed assets are read into memory; a hostile review reached
    /// 4 GB of RSS with 20 files of 100 MB each before this bound).
    @Test func assetsBeyondTheBodyLimitInAllSkipTheGroup() throws {
        let seed = Seed()
        try seed.write("heavy", "payload.json", #"{"images":["a.jpg","b.jpg"]}"#)
        try seed.write("heavy", "assets/a.jpg", Self.photo)
        try seed.write("heavy", "assets/b.jpg", Self.photo)
        try seed.write("light", "payload.json", #"{"images":["a.jpg"]}"#)
        try seed.write("light", "assets/a.jpg", Self.photo)
        let limit = Self.photo.count * 3 / 2
        try withTestServer(configure: {
            $0.seed = seed.path
            $0.transport.maxBodyBytes = limit
        }) { (_: Server, client: HTTPTestClient) throws in
            #expect(try client.get("/feeds/heavy").status == 404, "two photos together are over the limit")
            #expect(try client.get("/feeds/light").status == 200, "one photo is within it")
        }
    }

    /// `mv seed old && mkdir seed` (or `rm -rf`, or a checkout replacing the folder): the watch
    /// on the old folder is dropped and the path is watched again once a folder is back there;
    /// before, watching stopped silently.
    @Test func watchFollowsTheSeedFolderWhenItIsReplaced() throws {
        let seed = Seed()
        try seed.write("g", "payload.json", #"{"v":1}"#)
        try seeded(seed, watch: true) { _, client in
            let first = try #require(try served(client, "g"))
            try FileManager.default.moveItem(atPath: seed.path, toPath: seed.scratch.path + "/old-seed")
            try seed.write("g", "payload.json", #"{"v":2}"#)
            let changed = try waitForChange(client, "g", from: first.fingerprint)
            #expect(changed.status == 200)
            #expect((changed.json["payload"] as? [String: Any])?["v"] as? Int == 2)
            // The new folder is watched as the old one was: a later edit is served too.
            let second = try #require(changed.json["fingerprint"] as? String)
            try seed.write("g", "payload.json", #"{"v":3}"#)
            #expect((try waitForChange(client, "g", from: second).json["payload"] as? [String: Any])?["v"] as? Int == 3)
        }
    }

    /// What is in the seed folder but is no group is named (and why) for the start-up log:
    /// a link to a folder, a file, an unsafe name; editor leftovers are not worth a line.
    @Test func entriesThatAreNoGroupAreListedWithWhy() throws {
        let seed = Seed()
        try seed.write("real", "payload.json", "{}")
        try seed.write("bad name!", "payload.json", "{}")
        try FileManager.default.createSymbolicLink(
            atPath: seed.path + "/linked", withDestinationPath: seed.path + "/real")
        try Data("notes".utf8).write(to: URL(fileURLWithPath: seed.path + "/README.md"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: seed.path + "/.DS_Store"))
        let folder = SeedFolder(path: seed.path)
        #expect(try folder.groups() == ["real"])
        let ignored = folder.ignoredEntries()
        #expect(ignored.map(\.name) == ["README.md", "bad name!", "linked"])
        #expect(ignored.first { $0.name == "linked" }?.reason.contains("links are not followed") == true)
        #expect(ignored.first { $0.name == "bad name!" }?.reason.contains("group name") == true)
    }

    @Test func aSeedFolderThatIsNoFolderStopsTheStart() throws {
        let seed = Seed()
        var options = ServerOptions()
        options.transport.port = 0
        options.root = seed.scratch.path + "/data"
        options.transport.accessLog = false
        options.seed = seed.scratch.path + "/missing"
        #expect(throws: Server.StartError.self) { _ = try Server(options: options) }
        #expect(throws: ServerOptions.UsageError.self) { _ = try ServerOptions.parse(["--watch"], environment: [:]) }
    }

    @Test func watchRepublishesAfterAnEdit() throws {
        let seed = Seed()
        try seed.write("live", "payload.json", #"{"title":"first"}"#)
        try seeded(seed, watch: true) { _, client in
            let first = try #require(try served(client, "live"))
            try seed.write("live", "payload.json", #"{"title":"second"}"#)
            let changed = try waitForChange(client, "live", from: first.fingerprint)
            #expect(changed.status == 200)
            #expect((changed.json["payload"] as? [String: Any])?["title"] as? String == "second")
            // An image added later, and a group folder created while watching.
            let second = try #require(changed.json["fingerprint"] as? String)
            try seed.write("live", "assets/sun.jpg", Self.photo)
            let withImage = try waitForChange(client, "live", from: second)
            #expect((withImage.json["assets"] as? [[String: Any]])?.first?["name"] as? String == "sun.jpg")
            try seed.write("later", "payload.json", #"{"n":1}"#)
            // No feed yet, so nothing to long-poll on: ask again until it appears (or give up).
            var later = try client.get("/feeds/later")
            let deadline = Date().addingTimeInterval(20)
            while later.status == 404, Date() < deadline {
                usleep(20_000)
                later = try client.get("/feeds/later")
            }
            #expect(later.status == 200)
        }
    }

    @Test func aBrokenEditKeepsTheLastGoodFeed() throws {
        let seed = Seed()
        try seed.write("edited", "payload.json", #"{"title":"good"}"#)
        try seed.write("witness", "payload.json", #"{"n":1}"#)
        try seeded(seed, watch: true) { _, client in
            let good = try #require(try served(client, "edited"))
            let witness = try #require(try served(client, "witness"))
            // Both edits land in one debounce window; groups are republished in name order, so
            // once the witness changed, the broken edit has been tried too.
            try seed.write("edited", "payload.json", #"{"title":"#)
            try seed.write("witness", "payload.json", #"{"n":2}"#)
            #expect(try waitForChange(client, "witness", from: witness.fingerprint).status == 200)
            let after = try #require(try served(client, "edited"))
            #expect(after.id == good.id)
            #expect(after.payload["title"] as? String == "good")
            // Fixing the file publishes again.
            try seed.write("edited", "payload.json", #"{"title":"fixed"}"#)
            let fixed = try waitForChange(client, "edited", from: good.fingerprint)
            #expect((fixed.json["payload"] as? [String: Any])?["title"] as? String == "fixed")
        }
    }
}
