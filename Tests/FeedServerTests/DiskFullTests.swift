import Foundation
import Testing

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// A publish into a full file system: a small tmpfs mounted by the test (needs root, as CI has).
@Suite struct DiskFullTests {
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskAnswers507AndKeepsThePreviousFeed() throws {
        let scratch = ScratchDirectory("diskfull")
        let mountPoint = scratch.path + "/tmpfs"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=256k") == 0, "mount failed: errno \(errno)")
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }

        try withTestServer(root: mountPoint + "/data") { server, client in
            let first = try client.put("/feeds/g", json: #"{"small":true}"#)
            #expect(first.status == 201)
            let big = #"{"pad":""# + String(repeating: "x", count: 400_000) + #""}"#
            let full = try client.put("/feeds/g", json: big)
            #expect(full.status == 507)
            #expect(full.header("Content-Type") == "application/problem+json")
            let detail = full.json["detail"] as? String ?? ""
            #expect(detail.contains("nothing was changed and readers get what they got before"), "\(detail)")
            #expect(!detail.contains(mountPoint), "no absolute server path in a problem detail: \(detail)")
            #expect(detail.contains("g/generations/"), "the path relative to the root says where: \(detail)")

            let generations = try FileManager.default.contentsOfDirectory(
                atPath: server.options.root + "/g/generations")
            #expect(generations == [first.json["generationId"] as! String])
            let read = try client.get("/feeds/g")
            #expect(read.status == 200)
            #expect(read.header("ETag") == first.header("ETag"))
            #expect(try client.put("/feeds/g", json: #"{"small":false}"#).status == 201)
        }
    }
}
