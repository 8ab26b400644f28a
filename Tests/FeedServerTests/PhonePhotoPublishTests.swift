import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A publish with the photos a phone hands over, named as the payload names them.
@Suite struct PhonePhotoPublishTests {
    @Test func heicAndWebPPhotosArePublishedUnderTheirNamesAsJPEGOrPNG() throws {
        try withTestServer { _, client in
            var body = MultipartBody()
            body.field(
                "payload", #"{"items":[{"image":"leaf.heic"},{"image":"badge.webp"}]}"#, contentType: "application/json"
            )
            body.file("a", filename: "leaf.heic", try TestImages.heic(width: 1200, height: 900))
            body.file(
                "b", filename: "badge.webp",
                try TestImages.webp(width: 300, height: 200, kind: .rgbWithTransparentRightHalf))
            let published = try client.putMultipart("/feeds/phone", body)
            #expect(published.status == 201, "\(published.text)")
            let id = try #require(published.json["generationId"] as? String)
            let assets = (published.json["assets"] as? [[String: Any]]) ?? []
            #expect(assets.compactMap { $0["name"] as? String } == ["leaf.heic", "badge.webp"])
            let warnings = (published.json["warnings"] as? [[String: Any]]) ?? []
            #expect(!warnings.contains { ($0["code"] as? String) == "asset-not-found" }, "\(warnings)")
            #expect(try client.get("/assets/phone/\(id)/leaf.heic").header("Content-Type") == "image/jpeg")
            #expect(try client.get("/assets/phone/\(id)/badge.webp").header("Content-Type") == "image/png")

            // Exported and restored as it is: the converted bytes under their names, the same fingerprint.
            let archive = try client.get("/feeds/phone/archive")
            #expect(archive.status == 200)
            let restored = try client.request(
                "PUT", "/feeds/copy/archive", headers: [("Content-Type", "application/x-tar")], body: archive.body)
            #expect(restored.status == 201, "\(restored.text)")
            #expect(restored.json["fingerprint"] as? String == published.json["fingerprint"] as? String)
        }
    }
}
