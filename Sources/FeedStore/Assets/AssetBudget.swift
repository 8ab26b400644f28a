/// WidgetBridge's `AssetBudget`: which sizes and qualities to try, in which order, and when to
/// skip an image. Pure policy; the pixels are the `ImageEncoding`'s business.
public struct AssetBudget: Sendable, Equatable {
    /// Longest side of a stored image, in pixels (default 512).
    public var maxDimension: Int
    /// Smallest long side the budget shrinks to before giving up (default 128).
    public var minDimension: Int
    /// Largest stored image, in bytes (default 2 MiB).
    public var maxBytesPerImage: Int
    /// Largest total of stored images in one generation, in bytes (default 8 MiB).
    public var maxBytesTotal: Int
    /// Most decoded memory (width × height × 4, summed) one generation may need; nil = no limit.
    public var maxDecodedBytes: Int?
    /// First JPEG quality tried (default 80).
    public var jpegQuality: Int
    /// Lowest JPEG quality tried (default 40).
    public var minJPEGQuality: Int
    /// How much each step lowers the JPEG quality (default 10).
    public var qualityStep: Int

    /// Creates a budget; the defaults are WidgetBridge's.
    public init(
        maxDimension: Int = 512, minDimension: Int = 128, maxBytesPerImage: Int = 2 << 20,
        maxBytesTotal: Int = 8 << 20, maxDecodedBytes: Int? = nil, jpegQuality: Int = 80,
        minJPEGQuality: Int = 40, qualityStep: Int = 10
    ) {
        self.maxDimension = maxDimension
        self.minDimension = min(minDimension, maxDimension)
        self.maxBytesPerImage = maxBytesPerImage
        self.maxBytesTotal = maxBytesTotal
        self.maxDecodedBytes = maxDecodedBytes
        self.jpegQuality = jpegQuality
        self.minJPEGQuality = min(minJPEGQuality, jpegQuality)
        self.qualityStep = max(1, qualityStep)
    }

    /// The long sides tried, largest first: `maxDimension`, then ×3/4 steps down to `minDimension`.
    public var dimensionSteps: [Int] {
        var steps = [maxDimension]
        while let last = steps.last, last > minDimension {
            steps.append(max(minDimension, last * 3 / 4))
        }
        return steps
    }

    /// The qualities tried for one size: `jpegQuality` down to `minJPEGQuality` (PNG: one pass).
    public func qualitySteps(for format: ImageFormat) -> [Int] {
        guard format == .jpeg else { return [jpegQuality] }
        return Array(stride(from: jpegQuality, through: minJPEGQuality, by: -qualityStep))
    }

    /// An image the budget kept, with the figures users need.
    public struct Packed: Equatable, Sendable {
        /// Asset file name.
        public var name: String
        /// The stored image.
        public var image: EncodedImage
        /// Creates a packed entry.
        public init(name: String, image: EncodedImage) {
            self.name = name
            self.image = image
        }
    }

    /// An image the budget could not use, and why.
    public struct Skipped: Equatable, Sendable {
        /// Asset file name.
        public var name: String
        /// Why it was left out.
        public var reason: String
    }

    /// What `pack` kept and skipped.
    public struct Result: Equatable, Sendable {
        /// Kept images, in the order given.
        public var packed: [Packed]
        /// Skipped images, in the order given.
        public var skipped: [Skipped]
        /// Why the server could not judge an image (the first such reason), if it could not.
        public var serverFault: String?
        /// Creates a result (empty: `Result()`).
        public init(packed: [Packed] = [], skipped: [Skipped] = [], serverFault: String? = nil) {
            self.packed = packed
            self.skipped = skipped
            self.serverFault = serverFault
        }

        /// Records an image left out because of `error`, and the server's fault when it was one.
        public mutating func skip(_ name: String, _ error: AssetEncodingError) {
            skipped.append(Skipped(name: name, reason: error.description))
            if error.isServerFault, serverFault == nil { serverFault = error.description }
        }
        /// Sum of the kept images' bytes.
        public var totalBytes: Int { packed.reduce(0) { $0 + $1.image.byteCount } }
        /// Sum of the kept images' decoded sizes (what a widget holds in memory to draw them all).
        public var totalDecodedBytes: Int { packed.reduce(0) { $0 + $1.image.decodedBytes } }
    }

    /// One image to pack: its asset name and source.
    public struct Candidate: Sendable {
        /// Asset file name (decides the output format).
        public var name: String
        /// The upload, in memory or streamed to a file.
        public var source: AssetSource

        /// Creates a candidate from an upload.
        public init(name: String, source: AssetSource) {
            self.name = name
            self.source = source
        }

        /// Creates a candidate from bytes in memory.
        public init(name: String, source: [UInt8]) {
            self.init(name: name, source: .bytes(source))
        }
    }

    /// Packs candidates greedily in the order given: each takes the first size and quality that
    /// fits both its own limit and what the generation has left; one that never fits, or cannot
    /// be decoded, is skipped with a reason while the others go on.
    public func pack(_ candidates: [Candidate], encoder: any ImageEncoding) -> Result {
        pack(candidates, formats: candidates.map { encoder.outputFormat(name: $0.name, source: $0.source) }) {
            index, format throws(AssetEncodingError) in
            try encoder.renderer(for: candidates[index].source, format: format)
        }
    }

    /// `pack` with each candidate's output format (nil: its name says none) and renderers supplied
    /// per candidate index (for example prepared in parallel).
    public func pack(
        _ candidates: [Candidate], formats: [ImageFormat?],
        renderer: (Int, ImageFormat) throws(AssetEncodingError) -> any ImageRendering
    ) -> Result {
        var result = Result(packed: [], skipped: [])
        for (index, candidate) in candidates.enumerated() {
            let format = index < formats.count ? formats[index] : nil
            switch fit(
                candidate, format: format, used: result,
                renderer: { format throws(AssetEncodingError) in try renderer(index, format) })
            {
            case .success(let image): result.packed.append(Packed(name: candidate.name, image: image))
            case .failure(let error): result.skip(candidate.name, error)
            }
        }
        return result
    }

    /// Keeps source bytes unchanged (`?images=raw`, an as-is archive restore), still within the
    /// byte budgets. Not re-encoded, but still an image a widget draws: a JPEG or PNG name with a
    /// header the encoder accepts, or a WebP or HEIF name holding the JPEG or PNG this server
    /// stored it as (an export restored as it is), within its pixel limit (checked from the
    /// header, nothing decoded), so a widget is never handed a file it cannot draw or a
    /// decompression bomb.
    public func packRaw(_ candidates: [Candidate], encoder: any ImageEncoding) -> Result {
        var result = Result(packed: [], skipped: [])
        for candidate in candidates {
            switch keptAsIs(candidate, encoder: encoder) {
            case .failure(let reason):
                result.skip(candidate.name, reason)
            case .success(let image):
                if let problem = overBudget(image, used: result) {
                    result.skipped.append(Skipped(name: candidate.name, reason: problem))
                } else {
                    result.packed.append(Packed(name: candidate.name, image: image))
                }
            }
        }
        return result
    }

    private func keptAsIs(
        _ candidate: Candidate, encoder: any ImageEncoding
    ) -> Swift.Result<EncodedImage, AssetEncodingError> {
        let lower = candidate.name.lowercased()
        let converted = ImageFormat.convertedExtensions.contains(where: lower.hasSuffix)
        guard converted || ImageFormat(fileName: candidate.name) != nil else {
            return .failure(AssetEncodingError("the name must end in .jpg, .jpeg or .png"))
        }
        // The size is known without reading: an upload over the per-image limit is never loaded.
        if candidate.source.byteCount > maxBytesPerImage {
            return .failure(
                AssetEncodingError(
                    "\(candidate.source.byteCount) bytes exceeds the per-image limit of \(maxBytesPerImage)"))
        }
        // Only the magic is read: an upload file is kept as the file it is.
        guard let magic = try? candidate.source.prefix(16) else {
            return .failure(AssetEncodingError("the upload could not be read back"))
        }
        let stored = ImageFormat(magic: magic)
        guard let format = converted ? stored : ImageFormat(fileName: candidate.name) else {
            return .failure(
                AssetEncodingError(
                    "stored as it is, a \(lower.split(separator: ".").last.map { "." + $0 } ?? "") asset must hold "
                        + "the JPEG or PNG this server converts it to; add ?images=pack to convert it"))
        }
        do { _ = try encoder.renderer(for: candidate.source, format: format) } catch { return .failure(error) }
        let size = encoder.dimensions(of: candidate.source) ?? (width: 0, height: 0)
        switch candidate.source {
        case .bytes(let bytes): return .success(EncodedImage(bytes: bytes, width: size.width, height: size.height))
        case .file(let file): return .success(EncodedImage(file: file, width: size.width, height: size.height))
        }
    }

    private func fit(
        _ candidate: Candidate, format: ImageFormat?, used: Result,
        renderer makeRenderer: (ImageFormat) throws(AssetEncodingError) -> any ImageRendering
    ) -> Swift.Result<EncodedImage, AssetEncodingError> {
        guard let format else {
            return .failure(
                AssetEncodingError(
                    "the name must end in .jpg, .jpeg or .png (or .webp, .heic, .heif, .avif: stored as JPEG, "
                        + "or PNG with alpha) to choose the output format"))
        }
        do {
            let renderer = try makeRenderer(format)
            var lastProblem = "does not fit"
            for dimension in dimensionSteps {
                for quality in qualitySteps(for: format) {
                    let image = try renderer.render(maxDimension: dimension, quality: quality)
                    guard let problem = overBudget(image, used: used) else { return .success(image) }
                    lastProblem = problem
                }
            }
            return .failure(
                AssetEncodingError(
                    "\(lastProblem) even at \(minDimension) px"
                        + (format == .jpeg ? " and quality \(minJPEGQuality)" : "")))
        } catch {
            return .failure(error)
        }
    }

    /// Which limit an image breaks given what is already packed, or nil when it fits.
    private func overBudget(_ image: EncodedImage, used: Result) -> String? {
        if image.byteCount > maxBytesPerImage {
            return "\(image.byteCount) bytes exceeds the per-image limit of \(maxBytesPerImage)"
        }
        let left = maxBytesTotal - used.totalBytes
        if image.byteCount > left {
            return
                "\(image.byteCount) bytes exceeds the \(max(0, left)) bytes left of the generation budget of "
                + "\(maxBytesTotal)"
        }
        if let limit = maxDecodedBytes, used.totalDecodedBytes + image.decodedBytes > limit {
            return
                "\(image.decodedBytes) decoded bytes exceeds the \(max(0, limit - used.totalDecodedBytes)) left of "
                + "maxDecodedBytes \(limit)"
        }
        return nil
    }
}
