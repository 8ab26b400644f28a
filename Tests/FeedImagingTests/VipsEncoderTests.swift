import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The libvips encoder on images the tests make through libvips itself.
@Suite struct VipsEncoderTests {
    let encoder = try! VipsImageEncoder()

    private func isRed(_ pixel: [Double]) -> Bool { pixel[0] > 200 && pixel[1] < 80 && pixel[2] < 80 }

    @Test func twelveMegapixelPhotoWithOrientation6AndGPSComesBackPortraitWithoutEXIF() throws {
        let plain = try TestImages.jpeg(width: 4000, height: 3000)
        let photo = EXIF.inserting(orientation: 6, latitude: (48, 51, 29), into: plain)
        let source = try #require(Vips.header(of: photo))
        #expect(source.orientation == 6)
        #expect(source.hasEXIF)

        let result = AssetBudget().pack([.init(name: "photo.jpg", source: photo)], encoder: encoder)
        let image = try #require(result.packed.first?.image)
        #expect(image.width == 384 && image.height == 512, "portrait after applying orientation 6")
        let header = try #require(Vips.header(of: image.bytes))
        #expect(!header.hasEXIF, "no EXIF (and so no GPS) leaves the server")
        #expect(header.orientation == 1)
        #expect(!image.bytes.containsSequence(Array("Exif".utf8)))
        // Orientation 6 means "turn 90° clockwise": the marker drawn top-left is now top-right.
        let decoded = try TestImages.inspect(image.bytes)
        #expect(isRed(decoded.pixel(x: decoded.width - 10, y: 10)))
        #expect(!isRed(decoded.pixel(x: 10, y: 10)))
        #expect(image.bytes.count <= 2 << 20)
    }

    @Test func pngWithTransparencyKeepsItsAlpha() throws {
        let png = try TestImages.png(width: 1200, height: 800, kind: .rgbWithTransparentRightHalf)
        let image = try #require(
            AssetBudget().pack([.init(name: "a.png", source: png)], encoder: encoder).packed.first?.image)
        #expect(image.width == 512 && image.height == 341)
        let decoded = try TestImages.inspect(image.bytes)
        #expect(decoded.bands == 4)
        #expect(decoded.pixel(x: 500, y: 300)[3] == 0, "right half stays transparent")
        #expect(decoded.pixel(x: 10, y: 10)[3] == 255)
        #expect(ImageFormat(magic: image.bytes) == .png)
    }

    @Test func cmykJPEGBecomesSRGB() throws {
        let cmyk = try TestImages.jpeg(width: 1600, height: 1200, kind: .cmyk)
        #expect(Vips.header(of: cmyk)?.isCMYK == true)
        let image = try #require(
            AssetBudget().pack([.init(name: "c.jpg", source: cmyk)], encoder: encoder).packed.first?.image)
        let decoded = try TestImages.inspect(image.bytes)
        #expect(decoded.bands == 3)
        #expect(Vips.header(of: image.bytes)?.isCMYK == false)
        #expect(isRed(decoded.pixel(x: 20, y: 20)), "\(decoded.pixel(x: 20, y: 20))")
    }

    @Test func progressiveJPEGIsAccepted() throws {
        let progressive = try TestImages.jpeg(width: 2000, height: 1500, progressive: true)
        let result = AssetBudget().pack([.init(name: "p.jpg", source: progressive)], encoder: encoder)
        #expect(result.skipped.isEmpty)
        #expect(result.packed.first?.image.width == 512)
    }

    @Test func truncatedJPEGIsSkippedWithAReason() throws {
        let full = try TestImages.jpeg(width: 2000, height: 1500)
        let truncated = Array(full.prefix(full.count / 2))
        let good = try TestImages.jpeg(width: 600, height: 400)
        let result = AssetBudget().pack(
            [.init(name: "cut.jpg", source: truncated), .init(name: "good.jpg", source: good)], encoder: encoder)
        #expect(result.packed.map(\.name) == ["good.jpg"])
        let skipped = try #require(result.skipped.first)
        #expect(skipped.name == "cut.jpg")
        #expect(skipped.reason.contains("decoding failed"), "\(skipped.reason)")
    }

    @Test func decompressionBombIsRefusedFromItsHeader() throws {
        let url = try #require(
            Bundle.module.url(forResource: "bomb-50000x50000", withExtension: "png", subdirectory: "Fixtures"))
        let bomb = Array(try Data(contentsOf: url))
        #expect(bomb.count < 400_000)
        let before = peakResidentBytes()
        let started = Date()
        let result = AssetBudget().pack([.init(name: "bomb.png", source: bomb)], encoder: encoder)
        let elapsed = Date().timeIntervalSince(started)
        let reason = try #require(result.skipped.first?.reason)
        #expect(reason.contains("2500000000 pixels exceeds the limit of 40000000"), "\(reason)")
        // Decoding it would take 312 MB as 1-bit and far more as RGBA; the peak stays flat.
        #expect(peakResidentBytes() - before < 100 << 20)
        print("bomb refused in \(elapsed) s")
    }

    @Test func otherFormatsAreRefused() throws {
        let gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 64)
        let result = AssetBudget().pack(
            [.init(name: "x.png", source: gif), .init(name: "x.gif", source: gif)], encoder: encoder)
        #expect(result.skipped.count == 2)
        #expect(result.skipped[1].reason.contains(".jpg, .jpeg or .png"))
    }

    @Test func encodingIsDeterministicAndCached() throws {
        let photo = try TestImages.jpeg(width: 3000, height: 2000)
        let first = try VipsImageEncoder().renderer(for: .bytes(photo), format: .jpeg).render(
            maxDimension: 512, quality: 80)
        let fresh = try VipsImageEncoder()
        let second = try fresh.renderer(for: .bytes(photo), format: .jpeg).render(maxDimension: 512, quality: 80)
        #expect(first == second, "same source and settings, same bytes, across encoders")
        let encodes = fresh.encodes
        let third = try fresh.renderer(for: .bytes(photo), format: .jpeg).render(maxDimension: 512, quality: 80)
        #expect(third == first)
        #expect(fresh.cacheHits == 1)
        #expect(fresh.encodes == encodes, "a re-publish does not re-encode")
    }

    @Test func budgetParametersShrinkAndLowerQuality() throws {
        let photo = try TestImages.jpeg(width: 3000, height: 2000)
        let small = AssetBudget(maxDimension: 256).pack([.init(name: "a.jpg", source: photo)], encoder: encoder)
        #expect(small.packed.first?.image.width == 256)
        let roomy = try #require(
            AssetBudget().pack([.init(name: "a.jpg", source: photo)], encoder: encoder).packed.first?.image)
        let tight = try #require(
            AssetBudget(maxBytesPerImage: roomy.bytes.count - 1).pack(
                [.init(name: "a.jpg", source: photo)], encoder: encoder
            ).packed.first?.image)
        #expect(tight.bytes.count < roomy.bytes.count)
        #expect(tight.width == 512, "quality steps come before size steps")
    }

    /// `pack(threads:)` prepares every candidate ahead and then drops its decoded pixels; a
    /// candidate whose first attempt does not fit is decoded again by the packing pass. The
    /// result must be the sequential pack's, byte for byte, for both kinds of candidate.
    @Test func parallelPackMatchesSequentialPackWhenImagesMustShrinkAgain() throws {
        let photos = try (0..<4).map { try TestImages.jpeg(width: 1600 + 200 * $0, height: 1200) }
        let candidates = photos.enumerated().map {
            AssetBudget.Candidate(name: "p\($0.offset).jpg", source: $0.element)
        }
        let firstAttempts = AssetBudget().pack(candidates, encoder: try VipsImageEncoder()).packed.map(
            \.image.bytes.count)
        // Per-image limit just under the smallest first attempt: every image must step down.
        let smallest = try #require(firstAttempts.min())
        let budget = AssetBudget(maxBytesPerImage: smallest - 1)
        let sequential = budget.pack(candidates, encoder: try VipsImageEncoder())
        let parallel = try VipsImageEncoder().pack(candidates, budget: budget, threads: 3)
        #expect(sequential.packed.count == candidates.count, "every image fits after stepping down")
        #expect(sequential.packed.allSatisfy { $0.image.bytes.count < smallest })
        #expect(parallel.packed.map(\.name) == sequential.packed.map(\.name))
        #expect(parallel.packed.map(\.image.bytes) == sequential.packed.map(\.image.bytes))
        #expect(parallel.skipped.map(\.name) == sequential.skipped.map(\.name))
    }

    private func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}

extension Array where Element == UInt8 {
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
