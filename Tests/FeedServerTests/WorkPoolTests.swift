import ConcurrencyPrimitives
import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Synchronization
import Testing

@testable import FeedServerKit

/// Slow handlers run on the work pool: libmicrohttpd's threads keep answering meanwhile.
@Suite struct WorkPoolTests {
    @Test func readsAreAnsweredWhileAPhotoPublishRunsOnTheOnlyHTTPThread() throws {
        try withTestServer(configure: { $0.transport.threads = 1 }) { server, client in
            #expect(try client.put("/feeds/other", json: "[1]").status == 201)
            var body = MultipartBody()
            body.field("payload", #"{"photos":4}"#, contentType: "application/json")
            let photo = try TestImages.jpeg(width: 4000, height: 3000)
            for index in 0..<4 { body.file("image", filename: "p\(index).jpg", photo + [UInt8(index)]) }
            let upload = body
            let publishDone = Atomic<Bool>(false)
            let bodySent = Atomic<Bool>(false)
            let connection = try HTTPTestConnection(port: server.port)
            let publisher = Thread {
                var head = "PUT /feeds/photos HTTP/1.1\r\nHost: x\r\nContent-Type: \(upload.contentType)\r\n"
                head += "Content-Length: \(upload.finished.count)\r\n\r\n"
                _ = try? connection.sendRaw(Array(head.utf8) + upload.finished)
                bodySent.store(true, ordering: .sequentiallyConsistent)
                _ = try? connection.readResponse()
                publishDone.store(true, ordering: .sequentiallyConsistent)
            }
            publisher.start()
            try waitUntil { bodySent.load(ordering: .sequentiallyConsistent) }
            // Reads answered while the publish's handler is running (the gauge says so both
            // before and after the reads), not merely while its body was still arriving.
            var readsDuringPublish = 0
            // Until the publish is done, not a fixed number of reads: under ThreadSanitizer the
            // reads are slower and the job may start only after many of them.
            let deadline = Date().addingTimeInterval(60)
            while !publishDone.load(ordering: .sequentiallyConsistent), readsDuringPublish < 3, Date() < deadline {
                guard try client.get("/metrics").text.contains("feedserver_work_in_progress 1") else { continue }
                #expect(try client.get("/feeds/other").status == 200)
                #expect(try client.get("/healthz").status == 200)
                if try client.get("/metrics").text.contains("feedserver_work_in_progress 1") { readsDuringPublish += 1 }
            }
            #expect(readsDuringPublish > 0, "reads were answered while the publish was still running")
            try waitUntil(seconds: 60) { publishDone.load(ordering: .sequentiallyConsistent) }
            #expect(try client.get("/feeds/photos").status == 200)
        }
    }
}
