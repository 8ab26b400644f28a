import FeedImaging
import FeedImagingTesting
import FeedStore
import Testing

/// What phones' cameras and the web hand over: HEIC (the iPhone camera's default) and WebP are
/// decoded and stored under the name sent, as JPEG, or as PNG when they have alpha.
@Suite struct PhoneFormatTests {
    let encoder = try! VipsImageEncoder()

    private func isRed(_ pixel: [Double]) -> Bool { pixel[0] > 200 && pixel[1] < 80 && pixel[2] < 80 }

    @Test(arguments: ["heic", "webp"])
    func aPhotoIsStoredAsJPEGUnderItsOwnName(_ format: String) throws {
        let source =
            format == "heic"
            ? try TestImages.heic(width: 1200, height: 900) : try TestImages.webp(width: 1200, height: 900)
        let header = try #require(Vips.header(of: source), "libvips reads \(format)")
        #expect(header.width == 1200 && !header.hasAlpha)
        let result = AssetBudget().pack([.init(name: "leaf.\(format)", source: source)], encoder: encoder)
        #expect(result.skipped.isEmpty, "\(result.skipped)")
        let packed = try #require(result.packed.first)
        #expect(packed.name == "leaf.\(format)", "the name the payload uses")
        #expect(ImageFormat(magic: packed.image.bytes) == .jpeg)
        #expect(packed.image.width == 512 && packed.image.height == 384)
        #expect(isRed(try TestImages.inspect(packed.image.bytes).pixel(x: 10, y: 10)), "decoded, not a grey box")
    }

    @Test func aWebPWithAlphaIsStoredAsPNGAndKeepsIt() throws {
        let source = try TestImages.webp(width: 600, height: 400, kind: .rgbWithTransparentRightHalf)
        #expect(try #require(Vips.header(of: source)).hasAlpha)
        let packed = try #require(
            AssetBudget().pack([.init(name: "badge.webp", source: source)], encoder: encoder).packed.first)
        #expect(ImageFormat(magic: packed.image.bytes) == .png)
        let decoded = try TestImages.inspect(packed.image.bytes)
        #expect(decoded.bands == 4 && decoded.pixel(x: 500, y: 300)[3] == 0, "the right half stays transparent")
    }

    @Test func theNameStillDecidesWhatIsAnImage() throws {
        let webp = try TestImages.webp(width: 100, height: 80)
        let result = AssetBudget().pack(
            [.init(name: "leaf.jpg", source: webp), .init(name: "leaf.txt", source: webp)], encoder: encoder)
        #expect(result.packed.map(\.name) == ["leaf.jpg"], "a .jpg name is stored as JPEG whatever came")
        #expect(result.skipped.first?.reason.contains(".webp, .heic") == true, "\(result.skipped)")
    }

    @Test func asIsAPhoneNameMustHoldTheJPEGOrPNGThisServerStoredItAs() throws {
        let webp = try TestImages.webp(width: 100, height: 80)
        let jpeg = try TestImages.jpeg(width: 100, height: 80)
        let result = AssetBudget().packRaw(
            [.init(name: "leaf.webp", source: webp), .init(name: "fern.heic", source: jpeg)], encoder: encoder)
        #expect(result.packed.map(\.name) == ["fern.heic"], "an export of a converted photo restores as it is")
        #expect(result.packed.first?.image.bytes == jpeg)
        #expect(result.skipped.first?.reason.contains("?images=pack") == true, "\(result.skipped)")
    }
}
