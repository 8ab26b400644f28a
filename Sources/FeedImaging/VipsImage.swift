import CVips
import FeedStore

/// Owns one libvips image (`CVips_Image`, released with `CVips_image_free` in deinit).
/// `package`: the testing target makes and inspects images through it too.
package final class VipsImage {
    /// The image, owned.
    package let handle: OpaquePointer

    /// Takes ownership of the handle `make` returns (a shim call); throws that call's own
    /// libvips error text when it returns NULL.
    package init(_ action: String, _ make: () -> OpaquePointer?) throws(AssetEncodingError) {
        handle = try VipsErrorIsolation.run(action, make)
    }

    /// Takes ownership of the handle `make` returns; nil when it returns NULL, without libvips'
    /// error text (no second run to isolate it: for work whose failure is met again later).
    package init?(quietly make: () -> OpaquePointer?) {
        guard let handle = VipsErrorIsolation.runQuietly(make) else { return nil }
        self.handle = handle
    }

    /// Width in pixels.
    package var width: Int { Int(CVips_image_width(handle)) }
    /// Height in pixels.
    package var height: Int { Int(CVips_image_height(handle)) }
    /// Bands (3 RGB, 4 RGBA...).
    package var bands: Int { Int(CVips_image_bands(handle)) }
    /// Whether the last band is alpha.
    package var hasAlpha: Bool { CVips_image_has_alpha(handle) != 0 }

    /// One pixel's band values (`vips_getpoint`).
    package func pixel(x: Int, y: Int) -> [Double] {
        var values: (Double, Double, Double, Double) = (0, 0, 0, 0)
        let count = VipsErrorIsolation.runQuietly {
            withUnsafeMutableBytes(of: &values) { raw in
                CVips_pixel(handle, Int32(x), Int32(y), raw.baseAddress!.assumingMemoryBound(to: Double.self))
            }
        }
        return Array([values.0, values.1, values.2, values.3].prefix(max(0, Int(count))))
    }

    /// Encodes as JPEG (`vips_jpegsave_buffer`), metadata stripped unless `strip` is false.
    package func jpeg(quality: Int, progressive: Bool = false, strip: Bool = true) throws(AssetEncodingError) -> [UInt8]
    {
        try Vips.collect("JPEG encoding") {
            CVips_save_jpeg(handle, Int32(quality), progressive ? 1 : 0, strip ? 1 : 0, $0, $1)
        }
    }

    /// Encodes as PNG (`vips_pngsave_buffer`), alpha kept, metadata stripped unless `strip` is
    /// false; `palette` writes an 8-bit palette PNG.
    package func png(strip: Bool = true, palette: Bool = false) throws(AssetEncodingError) -> [UInt8] {
        try Vips.collect("PNG encoding") { CVips_save_png(handle, strip ? 1 : 0, palette ? 1 : 0, $0, $1) }
    }

    deinit { CVips_image_free(handle) }
}

/// Process-wide libvips set-up and helpers around the shim.
public enum Vips {
    /// Starts libvips once (loaders other than JPEG, PNG, WebP and HEIF blocked); throws when it cannot start.
    public static func start() throws(AssetEncodingError) {
        _ = try VipsErrorIsolation.run("starting libvips") { CVips_init() == 0 ? true : nil }
    }

    /// Runs a save call and copies its `g_malloc`'d buffer into Swift bytes.
    package static func collect(
        _ action: String, _ save: (UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> Int32
    ) throws(AssetEncodingError) -> [UInt8] {
        try VipsErrorIsolation.run(action) { () -> [UInt8]? in
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            guard save(&buffer, &length) == 0, let buffer else { return nil }
            defer { CVips_free_buffer(buffer) }
            return Array(UnsafeRawBufferPointer(start: buffer, count: length))
        }
    }

    /// What an encoded image's header says (no pixels decoded).
    public struct Header: Equatable, Sendable {
        public var width: Int
        public var height: Int
        public var bands: Int
        public var orientation: Int
        public var hasEXIF: Bool
        public var isCMYK: Bool
        /// Whether the image has an alpha band.
        public var hasAlpha: Bool = false
        /// libvips loader nickname, e.g. `jpegload_buffer`.
        public var loader: String
    }

    /// Reads the header of an encoded image (`CVips_read_header`); nil when libvips cannot.
    public static func header(of bytes: [UInt8]) -> Header? { header(of: .bytes(bytes)) }

    /// Reads the header of an upload in memory or on disk; nil when libvips cannot.
    public static func header(of source: AssetSource) -> Header? {
        var raw = CVips_Header()
        let status = VipsErrorIsolation.runProbe {
            switch source {
            case .bytes(let bytes): return bytes.withUnsafeBytes { CVips_read_header($0.baseAddress, $0.count, &raw) }
            case .file(let file): return CVips_read_header_file(file.path, &raw)
            }
        }
        guard status == 0, let loader = raw.loader else { return nil }
        return Header(
            width: Int(raw.width), height: Int(raw.height), bands: Int(raw.bands), orientation: Int(raw.orientation),
            hasEXIF: raw.has_exif != 0, isCMYK: raw.is_cmyk != 0, hasAlpha: raw.has_alpha != 0,
            loader: String(cString: loader))
    }
}
