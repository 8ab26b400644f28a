import CVips
import ConcurrencyPrimitives
import FeedStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The asset budget's encoder, on libvips: JPEG, PNG, WebP and HEIF (HEIC, AVIF) in, sRGB JPEG or
/// PNG out, oriented, metadata stripped, deterministic (same source and settings, same bytes).
public final class VipsImageEncoder: ImageEncoding {
    /// Sources with more pixels than this are refused from their header, before any decoding.
    public let maxPixels: Int
    private let cache: EncodeCache
    /// Packs in progress (a prefetch stands aside while any runs).
    private let packs = Atomic<Int>(0)

    /// Whether a pack is running: its threads take every core already.
    var isPacking: Bool { packs.load(ordering: .relaxed) > 0 }

    /// Starts libvips (once per process) and creates an encoder with an encode cache of `cacheBytes`.
    public init(maxPixels: Int = 40_000_000, cacheBytes: Int = 64 << 20) throws(AssetEncodingError) {
        try Vips.start()
        self.maxPixels = maxPixels
        cache = EncodeCache(capacityBytes: cacheBytes)
    }

    public func renderer(for source: AssetSource, format: ImageFormat) throws(AssetEncodingError) -> any ImageRendering
    {
        try vipsRenderer(for: source, format: format)
    }

    /// `renderer(for:format:)` with its concrete type, for `pack`'s preparation phase.
    func vipsRenderer(for source: AssetSource, format: ImageFormat) throws(AssetEncodingError) -> VipsRenderer {
        guard let header = Vips.header(of: source) else {
            throw AssetEncodingError(
                "cannot be decoded: not a JPEG, PNG, WebP or HEIF image, or its header is damaged")
        }
        guard Self.allowedLoaders.contains(where: header.loader.hasPrefix) else {
            throw AssetEncodingError(
                "unsupported image type (\(header.loader)); only JPEG, PNG, WebP and HEIF are accepted")
        }
        let pixels = header.width * header.height
        guard pixels <= maxPixels else {
            throw AssetEncodingError(
                "\(header.width) × \(header.height) = \(pixels) pixels exceeds the limit of \(maxPixels) "
                    + "(--max-image-pixels)"
            )
        }
        return VipsRenderer(source: source, format: format, sourceHash: source.sha256, cache: cache)
    }

    /// libvips loader class names (or nicknames) accepted: JPEG, PNG, WebP and HEIF (which reads
    /// HEIC and AVIF).
    static let allowedLoaders = [
        "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadHeif", "jpegload",
        "pngload", "webpload", "heifload",
    ]

    /// JPEG and PNG names by their name; WebP and HEIF names by the source's alpha (its header).
    public func outputFormat(name: String, source: AssetSource) -> ImageFormat? {
        ImageFormat.outputFormat(forName: name) { Vips.header(of: source)?.hasAlpha ?? false }
    }

    public func dimensions(of source: AssetSource) -> (width: Int, height: Int)? {
        Vips.header(of: source).map { ($0.width, $0.height) }
    }

    /// How many encodes were answered from the cache (for tests and metrics).
    public var cacheHits: Int { cache.hits }
    /// How many encodes libvips actually performed.
    public var encodes: Int { cache.misses }
}

/// Renders one source at the sizes and qualities the budget asks for, decoding it once per size.
final class VipsRenderer: ImageRendering {
    private let source: AssetSource
    private let format: ImageFormat
    private let sourceHash: String
    private let cache: EncodeCache
    private var thumbnails: [Int: VipsImage] = [:]

    init(source: AssetSource, format: ImageFormat, sourceHash: String, cache: EncodeCache) {
        self.source = source
        self.format = format
        self.sourceHash = sourceHash
        self.cache = cache
    }

    func render(maxDimension: Int, quality: Int) throws(AssetEncodingError) -> EncodedImage {
        let key = cacheKey(maxDimension: maxDimension, quality: quality)
        if case .cached(let image) = cache.claim(key) { return image }
        return try encode(key, maxDimension: maxDimension, quality: quality)
    }

    /// Encodes into the cache unless it is cached or being encoded by another thread (whose
    /// result `render` waits for): work ahead of the packing pass, which never waits for itself.
    /// A failure is left for `render` to meet and explain, so it is not decoded a second time
    /// here to isolate libvips' text.
    func warm(maxDimension: Int, quality: Int) {
        let key = cacheKey(maxDimension: maxDimension, quality: quality)
        guard case .claimed = cache.claim(key, waiting: false) else { return }
        _ = try? encode(key, maxDimension: maxDimension, quality: quality, quietly: true)
    }

    private func cacheKey(maxDimension: Int, quality: Int) -> EncodeCache.Key {
        EncodeCache.Key(
            sourceHash: sourceHash, format: format, maxDimension: maxDimension, quality: format == .jpeg ? quality : 0)
    }

    /// Encodes under the caller's claim on `key`, filling it (with nothing when it fails).
    private func encode(
        _ key: EncodeCache.Key, maxDimension: Int, quality: Int, quietly: Bool = false
    ) throws(AssetEncodingError)
        -> EncodedImage
    {
        var image: EncodedImage?
        defer { cache.fill(key, with: image) }
        let thumbnail = try self.thumbnail(maxDimension, quietly: quietly)
        let bytes = format == .jpeg ? try thumbnail.jpeg(quality: quality) : try thumbnail.png()
        let encoded = EncodedImage(bytes: bytes, width: thumbnail.width, height: thumbnail.height)
        image = encoded
        return encoded
    }

    /// Drops the decoded thumbnails (the encoded bytes stay in the encode cache). A renderer
    /// prepared ahead waits for the packing pass, which mostly needs the cached first attempt
    /// only; keeping every candidate's pixels meanwhile (48 photos: ~28 MB at 512 px) costs more
    /// than decoding again the few that need a smaller size.
    func releaseDecoded() {
        thumbnails.removeAll()
    }

    private func thumbnail(_ maxDimension: Int, quietly: Bool) throws(AssetEncodingError) -> VipsImage {
        if let existing = thumbnails[maxDimension] { return existing }
        let make = { [source] () -> OpaquePointer? in
            switch source {
            case .bytes(let bytes):
                return bytes.withUnsafeBytes { CVips_thumbnail($0.baseAddress, $0.count, Int32(maxDimension)) }
            case .file(let file): return CVips_thumbnail_file(file.path, Int32(maxDimension))
            }
        }
        let image: VipsImage
        if quietly {
            guard let decoded = VipsImage(quietly: make) else { throw AssetEncodingError("decoding failed") }
            image = decoded
        } else {
            image = try VipsImage("decoding", make)
        }
        thumbnails[maxDimension] = image
        return image
    }
}

extension VipsImageEncoder {
    /// Packs with the budget's policy after preparing every candidate (header checked, source
    /// hashed once, first attempt encoded) on `threads` threads: the greedy pass that follows
    /// reuses those renderers and mostly reads the cache. The upload's `prefetch` thread, when
    /// one still runs, becomes one of the `threads`, so no more images are decoded at once.
    /// The work runs on lowered threads of its own (`ThreadPriority`) while the caller waits,
    /// so the caller's thread keeps its priority for the disk work of the publish that follows.
    /// Without a thread for it, the result is a server fault (a 503), not a pack at the caller's
    /// priority: libvips would keep the workers it started for later packs.
    public func pack(
        _ candidates: [AssetBudget.Candidate], budget: AssetBudget, threads: Int, prefetch: ImagePrefetchBatch? = nil
    ) -> AssetBudget.Result {
        do {
            return try ThreadPriority.runLowered(name: Self.threadName) {
                self.packHere(candidates, budget: budget, threads: threads, prefetch: prefetch)
            }
        } catch {
            // Not on the caller's thread: libvips keeps the workers a pack starts for later
            // packs, and these would keep the caller's priority.
            prefetch?.cancel()
            return AssetBudget.Result(serverFault: error.description)
        }
    }

    /// The name of the threads that pack images, and of the helpers they start.
    public static let threadName = "feed-images"

    private func packHere(
        _ candidates: [AssetBudget.Candidate], budget: AssetBudget, threads: Int, prefetch: ImagePrefetchBatch?
    ) -> AssetBudget.Result {
        packs.add(1, ordering: .relaxed)
        defer { packs.subtract(1, ordering: .relaxed) }
        let prepared = PreparedRenderers(count: candidates.count)
        let formats = candidates.map { outputFormat(name: $0.name, source: $0.source) }
        let next = Atomic<Int>(0)
        let work: @Sendable () -> Void = {
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < candidates.count else { return }
                let candidate = candidates[index]
                guard let format = formats[index] else { continue }
                let outcome = Result { () throws(AssetEncodingError) -> any ImageRendering in
                    try self.warmedRenderer(for: candidate.source, format: format, budget: budget)
                }
                prepared.set(index, outcome)
            }
        }
        let lent = prefetch?.lend(work) ?? false
        // A helper that cannot start leaves its share to the others and this thread.
        let wanted = min(threads, candidates.count) - 1 - (lent ? 1 : 0)
        let helpers = (0..<max(0, wanted)).compactMap { _ in try? JoinableThread(work) }
        work()
        for helper in helpers { helper.join() }
        if lent { prefetch?.waitForLentWork() }
        return budget.pack(candidates, formats: formats) { index, format throws(AssetEncodingError) in
            if let outcome = prepared.get(index) { return try outcome.get() }
            return try self.renderer(for: candidates[index].source, format: format)
        }
    }
}

extension VipsImageEncoder {
    /// A renderer whose first attempt under `budget` is in the encode cache (or being put there
    /// by another thread), its decoded pixels dropped: the header is checked, the image encoded
    /// once, and what is kept between preparation and packing is the encoded bytes.
    func warmedRenderer(
        for source: AssetSource, format: ImageFormat, budget: AssetBudget
    ) throws(AssetEncodingError)
        -> VipsRenderer
    {
        let renderer = try vipsRenderer(for: source, format: format)
        renderer.warm(maxDimension: budget.maxDimension, quality: budget.qualitySteps(for: format)[0])
        renderer.releaseDecoded()
        return renderer
    }
}

/// Renderers prepared by helper threads, handed to the packing thread after they are joined.
final class PreparedRenderers: @unchecked Sendable {
    // Each slot is written by one helper before `join`, and read only after it.
    private var slots: [Result<any ImageRendering, AssetEncodingError>?]
    private let lock = Lock(())

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ outcome: Result<any ImageRendering, AssetEncodingError>) {
        lock.withLock { _ in slots[index] = outcome }
    }

    func get(_ index: Int) -> Result<any ImageRendering, AssetEncodingError>? {
        lock.withLock { _ in slots[index] }
    }
}
