import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// Multipart publishes with real images, and asset serving, against the live server.
@Suite struct AssetRoutesTests {
    static let photo = try! TestImages.jpeg(width: 2400, height: 1600)
    static let transparent = try! TestImages.png(width: 900, height: 600, kind: .rgbWithTransparentRightHalf)

    private func upload(
        payload: String = #"{"quotes":[{"id":"q1","image":"q1.jpg"}]}"#, _ files: [(String, [UInt8])]
    ) -> MultipartBody {
        var body = MultipartBody()
        body.field("payload", payload, contentType: "application/json")
        for (index, (name, bytes)) in files.enumerated() { body.file("asset\(index)", filename: name, bytes) }
        return body
    }

    /// Repeated asset reads share one prepared answer (the file kept open); once the file is gone
    /// from its generation, reads are 404 within the documented second, and a request that needs
    /// its own answer (an X-Request-Id to echo) still gets every byte.
    @Test func aCachedAssetAnswerFollowsItsFile() throws {
        try withTestServer { server, client in
            let published = try client.putMultipart("/feeds/g", upload([("q1.jpg", Self.photo)]))
            let url = try #require((published.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
            let first = try client.get(url)
            #expect(first.status == 200 && !first.body.isEmpty)
            for _ in 0..<3 {
                let again = try client.get(url)
                #expect(again.status == 200 && again.body == first.body && again.header("ETag") == first.header("ETag"))
            }
            let traced = try client.get(url, headers: [("X-Request-Id", "asset-1")])
            #expect(traced.body == first.body && traced.header("X-Request-Id") == "asset-1")
            let head = try client.head(url)
            #expect(head.status == 200 && head.header("Content-Length") == String(first.body.count))
            let generation = try #require(published.json["generationId"] as? String)
            try FileManager.default.removeItem(
                atPath: "\(server.options.root)/g/generations/\(generation)/assets/q1.jpg")
            // The first request once the check is due sees it.
            usleep(useconds_t(FeedStore.assetProbeIntervalMs * 1000 + 100_000))
            #expect(try client.get(url).status == 404, "noticed within a second")
        }
    }

    /// A cached asset keeps its file open; once the file is removed (retention, DELETE), the
    /// next new asset read drops it, so a removed generation's disk space is given back.
    @Test func aRemovedAssetIsClosedWhenTheNextAssetIsCached() throws {
        try withTestServer { server, client in
            let first = try client.putMultipart("/feeds/g", upload([("q1.jpg", Self.photo)]))
            let firstURL = try #require((first.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
            #expect(try client.get(firstURL).status == 200)
            let generation = try #require(first.json["generationId"] as? String)
            let removed = "\(server.options.root)/g/generations/\(generation)/assets/q1.jpg"
            let openFiles = { () -> [String] in
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return entries.compactMap {
                    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
                }
            }
            #expect(openFiles().contains(removed), "kept open while cached")
            try FileManager.default.removeItem(atPath: removed)
            let second = try client.putMultipart(
                "/feeds/g",
                upload(payload: #"{"quotes":[{"id":"q2","image":"q2.png"}]}"#, [("q2.png", Self.transparent)]))
            let secondURL = try #require((second.json["assets"] as? [[String: Any]])?.first?["url"] as? String)
            #expect(try client.get(secondURL).status == 200)
            #expect(!openFiles().contains { $0.hasPrefix(removed) }, "the removed file is closed")
        }
    }

    @Test func multipartPublishStoresDownsampledImagesAndServesThem() throws {
        try withTestServer { _, client in
            let response = try client.putMultipart(
                "/feeds/g", upload([("q1.jpg", Self.photo), ("badge.png", Self.transparent)]))
            #expect(response.status == 201)
            let assets = try #require(response.json["assets"] as? [[String: Any]])
            #expect(assets.map { $0["name"] as? String } == ["q1.jpg", "badge.png"])
            #expect(assets[0]["width"] as? Int == 512 && assets[0]["height"] as? Int == 341)
            #expect(assets[0]["decodedBytes"] as? Int == 512 * 341 * 4)
            #expect(response.json["decodedBytes"] as? Int == 512 * 341 * 4 * 2)
            #expect((response.json["skipped"] as? [Any])?.isEmpty == true)

            let feed = try client.get("/feeds/g")
            let listed = try #require(feed.json["assets"] as? [[String: Any]])
            #expect(listed.map { $0["name"] as? String } == ["badge.png", "q1.jpg"])
            #expect(listed[1]["width"] as? Int == 512)
            let url = try #require(listed[1]["url"] as? String)

            let image = try client.get(url)
            #expect(image.status == 200)
            #expect(image.header("Content-Type") == "image/jpeg")
            #expect(image.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(image.header("ETag") == "\"\(SHA256Hash.hex(image.body))\"")
            #expect(image.body.count == listed[1]["bytes"] as? Int)
            #expect(try TestImages.inspect(image.body).width == 512)
            let notModified = try client.get(url, headers: [("If-None-Match", image.header("ETag")!)])
            #expect(notModified.status == 304)
            #expect(notModified.header("Content-Length") == "0")
            let head = try client.head(url)
            #expect(
                head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(image.body.count))
            #expect(try client.get(listed[0]["url"] as! String).header("Content-Type") == "image/png")

            let again = try client.putMultipart(
                "/feeds/g", upload([("q1.jpg", Self.photo), ("badge.png", Self.transparent)]))
            #expect(again.status == 200)
            #expect(again.json["result"] as? String == "unchanged")
        }
    }

    @Test func budgetParametersAndRawMode() throws {
        try withTestServer { server, client in
            let small = try client.putMultipart(
                "/feeds/g?maxDimension=200&quality=60", upload([("q1.jpg", Self.photo)]))
            #expect((small.json["assets"] as? [[String: Any]])?.first?["width"] as? Int == 200)

            let raw = try client.putMultipart("/feeds/r?images=raw", upload([("q1.jpg", Self.photo)]))
            #expect(raw.status == 201)
            let stored = try #require((raw.json["assets"] as? [[String: Any]])?.first)
            #expect(stored["bytes"] as? Int == Self.photo.count)
            #expect(stored["width"] as? Int == 2400)
            #expect(try client.get(stored["url"] as! String).body == Self.photo)

            let tooSmall = try client.putMultipart("/feeds/b?budgetBytes=100", upload([("q1.jpg", Self.photo)]))
            #expect(tooSmall.status == 201)
            #expect((tooSmall.json["skipped"] as? [[String: Any]])?.first?["name"] as? String == "q1.jpg")

            let generations = try FileManager.default.contentsOfDirectory(
                atPath: server.options.root + "/g/generations")
            let strict = try client.putMultipart(
                "/feeds/g?strict=true&budgetBytes=100", upload(payload: #"{"v":2}"#, [("q1.jpg", Self.photo)]))
            #expect(strict.status == 422)
            #expect((strict.json["skipped"] as? [[String: Any]])?.first?["name"] as? String == "q1.jpg")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: server.options.root + "/g/generations")
                    == generations)

            #expect(try client.putMultipart("/feeds/g?maxDimension=0", upload([])).status == 400)
            #expect(try client.putMultipart("/feeds/g?images=weird", upload([])).status == 400)
        }
    }

    @Test func malformedUploadsAreRefused() throws {
        try withTestServer(configure: { $0.transport.maxParts = 4 }) { _, client in
            var noPayload = MultipartBody()
            noPayload.file("a", filename: "a.jpg", Self.photo)
            #expect(try client.putMultipart("/feeds/g", noPayload).status == 400)

            let badName = try client.putMultipart("/feeds/g", upload([("../evil.jpg", Self.photo)]))
            #expect(badName.status == 400)
            #expect((badName.json["type"] as? String)?.hasSuffix("invalid-asset-name") == true)

            #expect(
                try client.putMultipart("/feeds/g", upload([("a.jpg", Self.photo), ("a.jpg", Self.photo)])).status
                    == 400)

            let many = upload((1...6).map { ("p\($0).jpg", [UInt8](repeating: 1, count: 10)) })
            #expect(try client.putMultipart("/feeds/g", many).status == 413)

            let noBoundary = try client.request(
                "PUT", "/feeds/g", headers: [("Content-Type", "multipart/form-data")], body: Array("x".utf8))
            #expect(noBoundary.status == 400)

            var cut = upload([("a.jpg", Self.photo)]).bytes
            cut.removeLast(100)
            let truncated = try client.request(
                "PUT", "/feeds/g", headers: [("Content-Type", MultipartBody().contentType)], body: cut)
            #expect(truncated.status == 400)

            let invalidJSON = try client.putMultipart("/feeds/g", upload(payload: "{nope", []))
            #expect(invalidJSON.status == 400)
            #expect(try client.get("/feeds/g").status == 404, "nothing was published by any of these")
        }
    }
}
