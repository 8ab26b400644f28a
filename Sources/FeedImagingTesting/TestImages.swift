import CVips
import CVipsTesting
import FeedImaging

/// Real images made by libvips, for tests and benchmarks (no binary fixtures needed).
public enum TestImages {
    /// The kinds of synthetic image.
    public enum Kind: Int32, Sendable {
        case rgb = 0
        case rgbWithTransparentRightHalf = 1
        case cmyk = 2
        case grey = 3
        case greyWithAlpha = 4
        case grey16 = 5
        case rgb16 = 6
        /// Display P3 pixels with the P3 ICC profile attached.
        case displayP3 = 7
    }

    /// A photo-like gradient with noise and a solid red square in the top-left corner, as JPEG.
    public static func jpeg(
        width: Int, height: Int, kind: Kind = .rgb, quality: Int = 90, progressive: Bool = false
    ) throws -> [UInt8] {
        try Vips.start()
        let image = try VipsImage("making a test image") {
            CVipsTesting_make_test_image(Int32(width), Int32(height), kind.rawValue)
        }
        return try image.jpeg(quality: quality, progressive: progressive, strip: false)
    }

    /// Whether the server's thumbnail of `bytes` has exactly the pixels of libvips' own, made with
    /// colour management on (`managed`: `export_profile=srgb`) or off; nil when either fails.
    public static func thumbnailEqualsLibvips(_ bytes: [UInt8], maxDimension: Int, managed: Bool) throws -> Bool? {
        try Vips.start()
        let answer = bytes.withUnsafeBytes {
            CVipsTesting_thumbnail_equals($0.baseAddress, $0.count, Int32(maxDimension), managed ? 1 : 0)
        }
        return answer < 0 ? nil : answer == 1
    }

    /// The same picture as PNG (alpha and 16-bit bands kept, metadata and ICC profile kept);
    /// `palette` makes an 8-bit palette PNG.
    public static func png(width: Int, height: Int, kind: Kind = .rgb, palette: Bool = false) throws -> [UInt8] {
        try Vips.start()
        let image = try VipsImage("making a test image") {
            CVipsTesting_make_test_image(Int32(width), Int32(height), kind.rawValue)
        }
        return try image.png(strip: false, palette: palette)
    }

    /// The same picture as WebP (lossy, alpha kept): a format the server converts.
    public static func webp(width: Int, height: Int, kind: Kind = .rgb) throws -> [UInt8] {
        try encoded(width: width, height: height, kind: kind, suffix: ".webp")
    }

    /// The same picture as HEIC (HEVC in HEIF, the iPhone camera's default): a format the server converts.
    public static func heic(width: Int, height: Int, kind: Kind = .rgb) throws -> [UInt8] {
        try encoded(width: width, height: height, kind: kind, suffix: ".heic")
    }

    private static func encoded(width: Int, height: Int, kind: Kind, suffix: String) throws -> [UInt8] {
        try Vips.start()
        let image = try VipsImage("making a test image") {
            CVipsTesting_make_test_image(Int32(width), Int32(height), kind.rawValue)
        }
        return try Vips.collect("\(suffix) encoding") { CVipsTesting_save(image.handle, suffix, $0, $1) }
    }

    /// Decodes an encoded image and reads pixels from it: (width, height, bands, pixel(x, y)).
    public static func inspect(_ bytes: [UInt8]) throws -> DecodedImage {
        try Vips.start()
        let image = try VipsImage("decoding") {
            bytes.withUnsafeBytes { CVipsTesting_decode($0.baseAddress, $0.count) }
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
