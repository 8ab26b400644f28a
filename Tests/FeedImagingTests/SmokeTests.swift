import FeedImaging
import FeedStore
import Foundation
import Testing

@Suite struct SmokeTests {
    @Test func downsamplesAJPEGAndAPNG() throws {
        let encoder = try VipsImageEncoder()
        let jpeg = try TestImages.jpeg(width: 4000, height: 3000)
        let start = Date()
        let out = try encoder.renderer(for: jpeg, format: .jpeg).render(maxDimension: 512, quality: 80)
        print("jpeg \(jpeg.count) -> \(out.bytes.count) \(out.width)x\(out.height) in \(Date().timeIntervalSince(start))")
        #expect(out.width == 512 && out.height == 384)
        let png = try TestImages.png(width: 800, height: 600, kind: .rgbWithTransparentRightHalf)
        let pngOut = try encoder.renderer(for: png, format: .png).render(maxDimension: 512, quality: 80)
        #expect(pngOut.width == 512)
        let decoded = try TestImages.inspect(pngOut.bytes)
        print(decoded.bands, decoded.pixel(x: 10, y: 10), decoded.pixel(x: 500, y: 300))
    }
}
