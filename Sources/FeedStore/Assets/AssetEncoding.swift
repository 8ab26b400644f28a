/// The image formats a widget asset can have; chosen from the asset's file name.
public enum ImageFormat: String, Sendable, Equatable {
    case jpeg
    case png

    /// The format the first bytes announce (JPEG `FF D8 FF`, PNG's 8-byte signature), if any.
    public init?(magic bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else {
            return nil
        }
    }

    /// `.jpg`/`.jpeg` → JPEG, `.png` → PNG (case-insensitive); nil for anything else.
    public init?(fileName: String) {
        let lower = fileName.lowercased()
        if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") {
            self = .jpeg
        } else if lower.hasSuffix(".png") {
            self = .png
        } else {
            return nil
        }
    }
}

/// An encoded image and its pixel size.
public struct EncodedImage: Equatable, Sendable {
    /// The file bytes.
    public var bytes: [UInt8]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates an encoded image.
    public init(bytes: [UInt8], width: Int, height: Int) {
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// What a widget must hold in memory to draw it: width × height × 4 (RGBA).
    public var decodedBytes: Int { width * height * 4 }
}

/// Why an image could not be used.
public struct AssetEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sentence for the skipped list or a 422, including libvips' own words where it has some.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// One source image, decoded lazily, that the budget asks for at several sizes and qualities.
public protocol ImageRendering: AnyObject {
    /// The image re-encoded with its long side at most `maxDimension`; `quality` applies to JPEG.
    func render(maxDimension: Int, quality: Int) throws(AssetEncodingError) -> EncodedImage
}

/// Makes renderers for source images: the budget's view of an image codec (libvips in FeedImaging).
public protocol ImageEncoding: Sendable {
    /// Checks the source (format, header, pixel count) and returns a renderer for it.
    func renderer(for source: AssetSource, format: ImageFormat) throws(AssetEncodingError) -> any ImageRendering
    /// Width and height from the header alone, when the source is a readable image.
    func dimensions(of source: AssetSource) -> (width: Int, height: Int)?
}
