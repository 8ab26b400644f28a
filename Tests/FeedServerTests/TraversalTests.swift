import FeedImaging
import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// Hostile asset paths against the live server: no byte outside a generation's assets is ever
/// served, and no request gets a 5xx.
@Suite struct TraversalTests {
    @Test func hostilePathsNeverEscapeTheGenerationsAssets() throws {
        let scratch = ScratchDirectory("traversal")
        let secret = "TOP-SECRET-\(UUID().uuidString)"
        let secretFile = scratch.path + "/secret.png"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: secretFile))
        let root = scratch.path + "/root"

        try withTestServer(root: root) { server, client in
            var body = MultipartBody()
            body.field("payload", #"{"ok":true}"#)
            body.file("a", filename: "a.png", try TestImages.png(width: 64, height: 64))
            body.file("b", filename: "b.png", try TestImages.png(width: 32, height: 32))
            let published = try client.putMultipart("/feeds/g", body)
            let id = try #require(published.json["generationId"] as? String)
            let generation = "\(root)/g/generations/\(id)"
            #expect(try client.get("/assets/g/\(id)/a.png").status == 200)

            // Plant what an attacker with write access to the folder might: symlinks out of it.
            try FileManager.default.createSymbolicLink(
                atPath: "\(generation)/assets/evil.png", withDestinationPath: secretFile)
            try FileManager.default.createSymbolicLink(
                atPath: "\(generation)/assets/passwd", withDestinationPath: "/etc/passwd")
            try FileManager.default.removeItem(atPath: "\(generation)/assets/b.png")
            try FileManager.default.createSymbolicLink(
                atPath: "\(generation)/assets/b.png", withDestinationPath: secretFile)
            try FileManager.default.createSymbolicLink(
                atPath: "\(root)/g/generations/\(id)-link", withDestinationPath: generation)
            try FileManager.default.createSymbolicLink(atPath: "\(root)/link", withDestinationPath: scratch.path)

            let targets = [
                "etc/passwd", "secret.png", "../secret.png", "current.json", "feed.json", "publish.lock", "evil.png",
                "passwd", "b.png",
            ]
            let prefixes = [
                "/assets/g/\(id)/", "/assets/g/", "/assets/", "/assets/g/\(id)-link/", "/assets/link/g/\(id)/",
                "/assets/g/generations/",
            ]
            let traversals = [
                "../", "../../", "../../../../../../", "..%2F", "..%2f..%2f..%2f", "%2e%2e/", "%2e%2e%2f",
                "%2E%2E%2F%2E%2E%2F",
                "..\\", "..%5c", "%252e%252e%252f", "%c0%ae%c0%ae/", "%e2%80%a4%e2%80%a4/", "./", "%2e/", "//", "%2f",
                "%00", "a.png%00/",
            ]
            var paths: [String] = []
            for prefix in prefixes {
                for traversal in traversals { paths.append(prefix + traversal + targets[paths.count % targets.count]) }
            }
            for target in targets { paths.append("/assets/g/\(id)/\(target)") }
            paths += [
                "/assets/g/\(id)/a.png/", "/assets/g/\(id)/a.png%2f..%2f..%2ffeed.json", "/assets/g/\(id)/a.png%00.jpg",
                "/assets/g/\(id)/%2e%2e%2fcurrent.json", "/assets/%2e%2e/g/\(id)/a.png", "/assets/g/..%2fg/a.png",
                "/assets/g/\(id)%2f..%2f..%2f/a.png", "/assets/g/\(id)/\(scratch.path)/secret.png",
                "/assets/g/\(id)/%2fetc%2fpasswd",
                "/assets/g/\(id)/a.png?x=../../secret.png", "/assets/g/\(id)/a.png#../../x", "/assets/g/\(id)/A.PNG",
                "/assets/g/\(id)/a.png.", "/assets/g/\(id)/.a.png", "/assets/g/\(id)/%61.png",
                "/assets/g/\(id)/a%2epng",
                "/assets/g/\(String(repeating: "x", count: 200))/a.png",
                "/assets/\(String(repeating: "%2e", count: 60))/x/y",
                "/assets/g/\(id)/\(String(repeating: "../", count: 50))etc/passwd", "/assets/%00/%00/%00",
                "/assets/g/\(id)/%zz",
                "/assets/g/\(id)/%", "/assets/g/\(id)/%e2%82", "/assets/g/\(id)/a.png\\..\\..\\secret.png",
            ]
            #expect(paths.count >= 100)

            var statuses: [Int: Int] = [:]
            for path in paths {
                let response = try client.get(path)
                statuses[response.status, default: 0] += 1
                #expect(response.status < 500, "\(path) → \(response.status)")
                #expect(!response.text.contains(secret), "\(path) leaked the secret")
                #expect(!response.text.contains("root:x:0:0"), "\(path) leaked /etc/passwd")
                if response.status == 200 {
                    // Only real, listed assets of the generation may come back.
                    // `%61` and `%2e` are unreserved characters: `%61.png` and `a%2epng` name `a.png` itself.
                    #expect(
                        path.hasPrefix("/assets/g/\(id)/a.png")
                            || ["%61.png", "a%2epng"].contains { path.hasSuffix("/\(id)/\($0)") }, "\(path) served 200")
                } else {
                    #expect(response.header("Content-Type") == "application/problem+json", "\(path)")
                }
            }
            #expect(
                try client.get("/assets/g/\(id)/b.png").status == 404,
                "a listed asset replaced by a symlink is not followed")
            print("hostile paths: \(paths.count), statuses: \(statuses)")
            withExtendedLifetime(server) {}
        }
    }

    /// A symbolic link in a group folder's place is refused, not written through: nothing lands
    /// outside the root, and the problem names no server path.
    @Test func aGroupFolderThatIsASymbolicLinkIsNotWrittenThrough() throws {
        let scratch = ScratchDirectory("group-link")
        let outside = scratch.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let root = scratch.path + "/root"
        try withTestServer(root: root) { _, client in
            try FileManager.default.createSymbolicLink(atPath: root + "/linked", withDestinationPath: outside)
            let refused = try client.put("/feeds/linked", json: #"{"n":1}"#)
            #expect(refused.status >= 400)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(!refused.text.contains(scratch.path), "no server path in the problem")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "nothing written outside")
            #expect(try client.put("/feeds/other", json: #"{"n":1}"#).status == 201, "other groups are served")
        }
    }
}
