import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

/// Every pixel layout a user can upload goes through the budget as a real image: decoded,
/// converted to 8-bit sRGB, re-encoded, and the marker still where it was.
@Suite struct PixelLayoutTests {
    let encoder = try! VipsImageEncoder()

    private func pack(_ name: String, _ source: [UInt8]) throws -> EncodedImage {
        let result = AssetBudget().pack([.init(name: name, source: source)], encoder: encoder)
        #expect(result.skipped.isEmpty, "\(name): \(result.skipped.map(\.reason))")
        return try #require(result.packed.first?.image)
    }

    @Test(arguments: [
        ("grey.png", TestImages.Kind.grey, false), ("grey-alpha.png", .greyWithAlpha, false),
        ("grey16.png", .grey16, false),
        ("rgb16.png", .rgb16, false), ("palette.png", .rgb, true), ("rgba.png", .rgbWithTransparentRightHalf, false),
    ])
    func everyPNGLayoutIsPacked(_ name: String, _ kind: TestImages.Kind, _ palette: Bool) throws {
        let source = try TestImages.png(width: 1000, height: 600, kind: kind, palette: palette)
        let image = try pack(name, source)
        #expect(image.width == 512 && image.height == 307, "\(name)")
        let decoded = try TestImages.inspect(image.bytes)
        let marker = decoded.pixel(x: 20, y: 20)
        if kind == .grey || kind == .greyWithAlpha || kind == .grey16 {
            // Red became its luminance: a dark, neutral grey.
            #expect(
                abs(marker[0] - marker[1]) < 3 && abs(marker[1] - marker[2]) < 3 && marker[0] < 160, "\(name) \(marker)"
            )
        } else {
            #expect(marker[0] > 200 && marker[1] < 80 && marker[2] < 80, "\(name) \(marker)")
        }
    }

    @Test func greyJPEGIsPacked() throws {
        let source = try TestImages.jpeg(width: 1600, height: 1200, kind: .grey)
        #expect(Vips.header(of: source)?.bands == 1)
        let image = try pack("grey.jpg", source)
        #expect(image.width == 512 && image.height == 384)
        #expect(ImageFormat(magic: image.bytes) == .jpeg)
    }

    @Test func anEmbeddedDisplayP3ProfileIsHonoured() throws {
        // The marker is sRGB red written as P3 numbers (about 234, 51, 35): read as sRGB without
        // the profile it would come out orange; with it, red again.
        let source = try TestImages.png(width: 1000, height: 600, kind: .displayP3)
        let raw = try TestImages.inspect(source).pixel(x: 20, y: 20)
        #expect(raw[1] > 30, "the source really holds P3 numbers: \(raw)")
        let image = try pack("p3.png", source)
        let marker = try TestImages.inspect(image.bytes).pixel(x: 20, y: 20)

        #expect(marker[0] > 245 && marker[1] < 15 && marker[2] < 15, "\(marker)")
        #expect(!image.bytes.containsBytes(Array("iCCP".utf8)), "profile not passed on: the output is plain sRGB")
    }

    @Test func anImageWithoutAProfileIsTakenAsSRGBWithoutATransform() throws {
        let source = try TestImages.jpeg(width: 1600, height: 1200)
        #expect(try TestImages.thumbnailEqualsLibvips(source, maxDimension: 512, managed: false) == true)
        // An sRGB-to-sRGB transform moves some values, so the check can tell the two apart.
        #expect(try TestImages.thumbnailEqualsLibvips(source, maxDimension: 512, managed: true) == false)
        let p3 = try TestImages.png(width: 1000, height: 600, kind: .displayP3)
        #expect(try TestImages.thumbnailEqualsLibvips(p3, maxDimension: 512, managed: true) == true, "profile honoured")
    }

    @Test func concurrentFailuresEachReportTheirOwnReason() async throws {
        let jpeg = try TestImages.jpeg(width: 1200, height: 900)
        let png = try TestImages.png(width: 1200, height: 900)
        let cutJPEG = Array(jpeg.prefix(jpeg.count / 3))
        let cutPNG = Array(png.prefix(png.count / 3))
        let encoder = self.encoder
        let reasons = await withTaskGroup(of: (String, String?).self) { group in
            for index in 0..<24 {
                let (name, bytes) = index % 2 == 0 ? ("cut\(index).jpg", cutJPEG) : ("cut\(index).png", cutPNG)
                group.addTask {
                    let result = AssetBudget().pack([.init(name: name, source: bytes)], encoder: encoder)
                    return (name, result.skipped.first?.reason)
                }
            }
            return await group.reduce(into: [(String, String?)]()) { $0.append($1) }
        }
        for (name, reason) in reasons {
            let text = try #require(reason, "\(name) was skipped")
            if name.hasSuffix(".jpg") {
                #expect(!text.lowercased().contains("png"), "\(name): \(text)")
            } else {
                #expect(!text.lowercased().contains("jpeg"), "\(name): \(text)")
            }
            #expect(text.components(separatedBy: "decoding failed").count == 2, "one message, not several: \(text)")
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsBytes(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
