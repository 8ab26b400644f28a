/// The image formats a widget asset is stored as; chosen from the asset's file name (a WebP or
/// HEIF name by the source's alpha: `outputFormat(forName:hasAlpha:)`).
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

    /// Names of sources stored as JPEG, or PNG when they have alpha: formats a widget's image
    /// view may not draw, which phones' cameras and the web hand over.
    public static let convertedExtensions = [".webp", ".heic", ".heif", ".avif"]

    /// The stored format for an asset named `name`: by its name for JPEG and PNG; for a WebP or
    /// HEIF name (kept, since the payload names it), JPEG, or PNG when the source has alpha.
    public static func outputFormat(forName name: String, hasAlpha: () -> Bool) -> ImageFormat? {
        if let format = ImageFormat(fileName: name) { return format }
        let lower = name.lowercased()
        guard convertedExtensions.contains(where: lower.hasSuffix) else { return nil }
        return hasAlpha() ? .png : .jpeg
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
    /// The file bytes (empty when the image is kept as its upload `file`).
    public var bytes: [UInt8]
    /// The upload file holding the image as it was sent (kept as it is, never read into memory).
    public var file: UploadedFile?
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

    /// An image kept as the upload file it arrived in.
    public init(file: UploadedFile, width: Int, height: Int) {
        self.init(bytes: [], width: width, height: height)
        self.file = file
    }

    /// Its size in bytes.
    public var byteCount: Int { file?.byteCount ?? bytes.count }

    /// Lowercase hex SHA-256 of its bytes (a file's, computed while it was written).
    public var sha256: String { file?.sha256 ?? SHA256Hash.hex(bytes) }

    /// What a widget must hold in memory to draw it: width × height × 4 (RGBA).
    public var decodedBytes: Int { width * height * 4 }
}

/// Why an image could not be used.
public struct AssetEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sentence for the skipped list or a 422, including libvips' own words where it has some.
    public var description: String
    /// The server failed, not the image (no thread or memory to decode it): the publish is
    /// refused for now rather than made without the image.
    public var isServerFault: Bool

    /// Creates an error.
    public init(_ description: String, isServerFault: Bool = false) {
        self.description = description
        self.isServerFault = isServerFault
    }
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
    /// The format an asset named `name` is stored as (nil: its name says no image format).
    func outputFormat(name: String, source: AssetSource) -> ImageFormat?
}

extension ImageEncoding {
    /// By the name alone: JPEG or PNG names only.
    public func outputFormat(name: String, source: AssetSource) -> ImageFormat? {
        ImageFormat(fileName: name)
    }
}
