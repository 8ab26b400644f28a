import ConcurrencyPrimitives
import FeedImaging
import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// Photo publishes run on a lane of their own: while as many of them pack as the work pool has
/// threads, a JSON publish, a listing and a DELETE are answered without waiting for them.
@Suite struct ImageLaneTests {
    @Test func jsonPublishesListingsAndDeletesDoNotWaitForPhotoPublishes() throws {
        try withTestServer { server, client in
            var body = MultipartBody()
            for index in 0..<6 {
                body.file("p\(index)", filename: "p\(index).jpg", try TestImages.jpeg(width: 4000, height: 3000))
            }
            body.field("payload", #"{"photos":6}"#, contentType: "application/json")  // last: all decoded by the pack
            let photoBody = body
            #expect(try client.put("/feeds/other", json: #"{"n":0}"#).status == 201)
            let photos = Lock<[Int]>([])
            let done = DispatchSemaphore(value: 0)
            for index in 0..<2 {  // the test server's pool has two threads
                try DetachedThread.start {
                    let status =
                        (try? HTTPTestClient(port: server.port).putMultipart("/feeds/photos\(index)", photoBody))?
                        .status
                    photos.withLock { $0.append(status ?? -1) }
                    done.signal()
                }
            }
            #expect(
                Self.wait { server.metrics.workInProgress.load(ordering: .relaxed) >= 2 },
                "both photo publishes running")
            let json = try client.put("/feeds/other", json: #"{"n":1}"#)
            let listing = try client.get("/feeds")
            let deleted = try client.request("DELETE", "/feeds/other")
            let stillPacking = photos.withLock { $0.isEmpty }
            let statuses: [Int] = [json.status, listing.status, deleted.status]
            #expect(statuses == [201, 200, 204])
            #expect(stillPacking, "answered while both photo publishes still packed")
            for _ in 0..<2 { #expect(done.wait(timeout: .now() + 120) == .success) }
            let photoStatuses: [Int] = photos.withLock { $0 }
            #expect(photoStatuses == [201, 201])
        }
    }

    /// Waits (up to 60 s) until `condition` holds.
    private static func wait(_ condition: () -> Bool) -> Bool {
        for _ in 0..<60_000 {
            if condition() { return true }
            usleep(1_000)
        }
        return false
    }
}
