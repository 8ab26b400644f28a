import CVips
import FeedStore

/// Real images made by libvips, for tests and benchmarks (no binary fixtures needed).
public enum TestImages {
    /// The kinds of synthetic image.
    public enum Kind: Int32, Sendable {
        case rgb = 0
        case rgbWithTransparentRightHalf = 1
        case cmyk = 2
    }

    /// A photo-like gradient with noise and a solid red square in the top-left corner, as JPEG.
    public static func jpeg(width: Int, height: Int, kind: Kind = .rgb, quality: Int = 90, progressive: Bool = false) throws -> [UInt8] {
        try Vips.start()
        let image = try VipsImage(taking: CVips_make_test_image(Int32(width), Int32(height), kind.rawValue), action: "making a test image")
        return try image.jpeg(quality: quality, progressive: progressive, strip: false)
    }

    /// The same picture as PNG (alpha kept for `.rgbWithTransparentRightHalf`).
    public static func png(width: Int, height: Int, kind: Kind = .rgb) throws -> [UInt8] {
        try Vips.start()
        let image = try VipsImage(taking: CVips_make_test_image(Int32(width), Int32(height), kind.rawValue), action: "making a test image")
        return try image.png()
    }

    /// Decodes an encoded image and reads pixels from it: (width, height, bands, pixel(x, y)).
    public static func inspect(_ bytes: [UInt8]) throws -> DecodedImage {
        try Vips.start()
        let image = try bytes.withUnsafeBytes { raw throws(AssetEncodingError) in
            try VipsImage(taking: CVips_decode(raw.baseAddress, raw.count), action: "decoding")
        }
        return DecodedImage(image: image)
    }

    /// A fully decoded image.
    public struct DecodedImage {
        fileprivate let image: VipsImage
        /// Width in pixels.
        public var width: Int { image.width }
        /// Height in pixels.
        public var height: Int { image.height }
        /// Bands (3 RGB, 4 RGBA).
        public var bands: Int { image.bands }
        /// Band values at a pixel.
        public func pixel(x: Int, y: Int) -> [Double] { image.pixel(x: x, y: y) }
    }
}
