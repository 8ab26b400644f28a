import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A seed folder sent as `tar -cf - -C folder .` (or `-czf`), the way the recipes send one:
/// what a Mac or an editor leaves in it, compression, and a refusal that says what helps.
@Suite struct ArchiveFolderTests {
    /// A seed folder with one photo and the leftovers a Finder, an editor and git leave.
    private func seedFolder(_ scratch: ScratchDirectory) throws -> String {
        let folder = scratch.path + "/quotes"
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: folder + "/.git", withIntermediateDirectories: true)
        manager.createFile(atPath: folder + "/payload.json", contents: Data(#"{"image":"q1.jpg"}"#.utf8))
        manager.createFile(
            atPath: folder + "/assets/q1.jpg", contents: Data(try TestImages.jpeg(width: 800, height: 600)))
        for leftover in [".DS_Store", "assets/.DS_Store", "assets/._q1.jpg", "assets/q1.jpg~", ".git/config"] {
            manager.createFile(atPath: folder + "/" + leftover, contents: Data([0, 1, 2]))
        }
        // A link inside a hidden folder is skipped with it, whatever it points at.
        try manager.createDirectory(atPath: folder + "/.venv/bin", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: folder + "/.venv/bin/python", withDestinationPath: "/usr/bin/python3")
        return folder
    }

    /// What `tar` makes of the folder (`-z`: gzip-compressed).
    private func tar(_ folder: String, gzip: Bool = false) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/tar")
        process.arguments = [gzip ? "-czf" : "-cf", "-", "-C", folder, "."]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return Array(bytes)
    }

    /// A gzip-compressed seed folder of `{}` and one asset of `bytes` zeros.
    private func gzippedZeros(_ scratch: ScratchDirectory, asset: String, bytes: Int) throws -> [UInt8] {
        let folder = scratch.path + "/zeros"
        try FileManager.default.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/payload.json", contents: Data("{}".utf8))
        FileManager.default.createFile(atPath: folder + "/assets/" + asset, contents: Data(count: bytes))
        return try tar(folder, gzip: true)
    }

    private func restore(_ client: HTTPTestClient, _ path: String, _ body: [UInt8], type: String) throws -> WireResponse
    {
        try client.request("PUT", path, headers: [("Content-Type", type)], body: body)
    }

    @Test func aFolderWithLeftoversIsPublishedWithoutThemPlainOrGzipped() throws {
        let scratch = ScratchDirectory()
        let folder = try seedFolder(scratch)
        try withTestServer { _, client in
            let plain = try restore(client, "/feeds/plain/archive", try tar(folder), type: "application/x-tar")
            #expect(plain.status == 201, "\(plain.text)")
            #expect((plain.json["assets"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["q1.jpg"])
            let fingerprint = try #require(plain.json["fingerprint"] as? String)
            for (group, type) in [("zipped", "application/x-tar"), ("gzip-typed", "application/gzip")] {
                let zipped = try restore(client, "/feeds/\(group)/archive", try tar(folder, gzip: true), type: type)
                #expect(zipped.status == 201, "\(type): \(zipped.text)")
                #expect(zipped.json["fingerprint"] as? String == fingerprint, "\(type): the same content")
            }
        }
    }

    @Test func aGzippedTarIsBoundedByWhatItUnpacksTo() throws {
        // 4 MiB of zeros compress to a few KiB: the body passes the limit, what it unpacks to does not.
        let body = try gzippedZeros(ScratchDirectory(), asset: "z.jpg", bytes: 4 << 20)
        #expect(body.count < 64 << 10)
        try withTestServer(configure: { $0.transport.maxBodyBytes = 1 << 20 }) { _, client in
            let response = try restore(client, "/feeds/bomb/archive", body, type: "application/gzip")
            #expect(response.status == 413, "\(response.text)")
            #expect(response.json["type"] as? String == "https://feed-server.invalid/problems/archive-too-large")
            #expect(try client.get("/feeds/bomb").status == 404)
            let junk = try restore(
                client, "/feeds/junk/archive", [0x1F, 0x8B, 8, 0] + [UInt8](repeating: 7, count: 600),
                type: "application/gzip")
            #expect(junk.status == 400, "\(junk.text)")
        }
    }

    @Test func aGzippedTarUnpacksToAtMost64TimesItsSizeWhateverTheLimits() throws {
        // 40 MiB of zeros gzip to about 40 KiB: within --max-body-bytes and any asked-for budget,
        // 1,000 times the body. Refused from its header, before a byte of it is written.
        let body = try gzippedZeros(ScratchDirectory(), asset: "z.png", bytes: 40 << 20)
        #expect(body.count < 256 << 10)
        try withTestServer(configure: { $0.transport.maxBodyBytes = 1 << 30 }) { server, client in
            let response = try restore(
                client, "/feeds/bomb/archive?maxBytes=1073741824&budgetBytes=4294967296", body,
                type: "application/gzip")
            #expect(response.status == 400, "\(response.text)")
            #expect((response.json["detail"] as? String)?.contains("64 times") == true, "\(response.text)")
            #expect(try client.get("/feeds/bomb").status == 404)
        }
    }

    @Test func assetsOverTheBudgetAreA422ThatNamesImagesPack() throws {
        let scratch = ScratchDirectory()
        let folder = try seedFolder(scratch)
        try withTestServer { _, client in
            let body = try tar(folder)
            let refused = try restore(client, "/feeds/g/archive?maxBytes=1000", body, type: "application/x-tar")
            #expect(refused.status == 422)
            let detail = refused.json["detail"] as? String ?? ""
            #expect(detail.contains("?images=pack") && !detail.contains("strict=true"), "\(detail)")
            let packed = try restore(
                client, "/feeds/g/archive?images=pack&maxBytes=20000", body, type: "application/x-tar")
            #expect(packed.status == 201, "\(packed.text)")
        }
    }
}
