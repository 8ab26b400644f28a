import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// `DELETE /feeds/{group}` as a widget still showing the old feed sees it.
@Suite struct DeleteTests {
    /// Publishes group `g` with one image, `q1.png`; its generation id.
    private func publishWithImage(_ client: HTTPTestClient) throws -> String {
        var body = MultipartBody()
        body.field("payload", #"{"image":"q1.png"}"#, contentType: "application/json")
        body.file("image", filename: "q1.png", try TestImages.png(width: 30, height: 20))
        return try #require(try client.putMultipart("/feeds/g", body).json["generationId"] as? String)
    }

    @Test func theFeedIsGoneAtOnceItsImagesStayThroughTheGracePeriodAndTheGroupLeavesTheListing() throws {
        try withTestServer { server, client in
            var body = MultipartBody()
            body.field("payload", #"{"image":"q1.png"}"#, contentType: "application/json")
            body.file("image", filename: "q1.png", try TestImages.png(width: 30, height: 20))
            let published = try client.putMultipart("/feeds/g", body)
            #expect(published.status == 201)
            let id = try #require(published.json["generationId"] as? String)
            #expect(try client.put("/feeds/other", json: "[1]").status == 201)
            let asset = "/assets/g/\(id)/q1.png"
            let before = try client.get(asset)
            #expect(before.status == 200)

            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            #expect(try client.get("/feeds/g").status == 404)
            let after = try client.get(asset)
            #expect(after.status == 200 && after.body == before.body, "served from the deleted generations")
            let listing = try client.get("/feeds")
            #expect(listing.status == 200)
            #expect(listing.text.contains(#""other""#) && !listing.text.contains(#""g""#), "\(listing.text)")
            let entries = try FileManager.default.contentsOfDirectory(atPath: server.options.root + "/g")
            #expect(!entries.contains { $0.hasPrefix(".deleted") || $0 == "generations" }, "\(entries)")
        }
    }

    @Test func withNoGracePeriodTheImagesGoWithTheFeed() throws {
        try withTestServer(configure: { $0.graceSeconds = 0 }) { _, client in
            let id = try publishWithImage(client)
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            #expect(try client.get("/assets/g/\(id)/q1.png").status == 404)
        }
    }

    @Test func anImageServedDuringTheGracePeriodIsNotServedAfterIt() throws {
        try withTestServer(configure: { $0.graceSeconds = 1 }) { server, client in
            let id = try publishWithImage(client)
            let asset = "/assets/g/\(id)/q1.png"
            #expect(try client.get(asset).status == 200)
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            for _ in 0..<3 { #expect(try client.get(asset).status == 200, "within the grace period, again and again") }
            usleep(1_200_000)
            #expect(try client.get(asset).status == 404, "past it, though it was served a moment ago")
            let area = server.options.root + "/.feed-server-deleted/g"
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: area)) ?? []).isEmpty, "and removed")
        }
    }

    /// The server's own folders start with '.', so no group does, in any case: on a Mac's
    /// case-insensitive folder `.FEED-SERVER-DELETED` would be the server's deleted area.
    @Test func noGroupNameStartsWithADot() throws {
        try withTestServer { _, client in
            for name in [".FEED-SERVER-DELETED", ".Feed-server-uploads", ".hidden", ".x"] {
                let response = try client.put("/feeds/\(name)", json: "[1]")
                #expect(response.status == 400, "\(name)")
                #expect(((response.json["detail"] as? String) ?? "").contains("starts with '.'"), "\(name)")
            }
        }
    }
}

/// A writer that keeps a group's lock (another process, a fault-lab hold) holds a publish or
/// DELETE back for `lockWaitMs` at most, never a work-pool thread for good.
@Suite struct GroupLockWaitTests {
    @Test func aPublishAndADeleteBehindAHeldLockAre409AfterTheWaitAndOtherGroupsAreServed() throws {
        try withTestServer { server, client in
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            #expect(try client.put("/feeds/other", json: "[1]").status == 201)
            let descriptor = open(server.options.root + "/g/publish.lock", O_RDWR | O_CLOEXEC)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            #expect(flock(descriptor, LOCK_EX) == 0, "the test plays another writer")
            let started = Date()
            let publish = try client.put("/feeds/g", json: "[2]")
            #expect(publish.status == 409)
            #expect(publish.json["type"] as? String == "https://feed-server.invalid/problems/group-locked")
            #expect(publish.header("Retry-After") == "1")
            #expect(Date().timeIntervalSince(started) < 10)
            #expect(try client.request("DELETE", "/feeds/g").status == 409)
            #expect(try client.put("/feeds/other", json: "[2]").status == 201, "another group is not held")
            #expect(try client.get("/feeds/g").json["payload"] as? [Int] == [1], "nothing was written")
            _ = flock(descriptor, LOCK_UN)
            #expect(try client.put("/feeds/g", json: "[2]").status == 201)
        }
    }
}
