import FeedStore

/// `GET` and `HEAD /assets/{group}/{generationId}/{name}`: an asset's bytes, sent from the file.
///
/// Path safety: the router decoded each segment exactly once (so `%2F` is a character, not a
/// separator); every segment must be a safe name; the generation must list the name; the file is
/// opened beneath the root without following symlinks. Every refusal is the same generic 400 or
/// 404, so nothing outside a generation's assets can be probed.
struct AssetRoutes: Sendable {
    let store: FeedStore
    let index = AssetIndexCache()

    var route: Route {
        Route("/assets/{group}/{generationId}/{name}", methods: ["GET": { serve($0) }])
    }

    func serve(_ routed: RoutedRequest) -> HTTPResponse {
        let (group, generation, name) = (routed.parameters[0], routed.parameters[1], routed.parameters[2])
        guard SafeName.isGroupName(group), SafeName.isSafe(generation), SafeName.isSafe(name) else {
            return Problem.badRequest("invalid-asset-path", "Invalid asset path",
                                      "Asset paths are /assets/{group}/{generationId}/{name}, each a safe name (A-Z a-z 0-9 - _ .).").response
        }
        let notFound = Problem.notFound("No asset '\(name)' in generation '\(generation)' of group '\(group)'.")
        guard let listed = index.assets(group: group, generation: generation, store: store)?.first(where: { $0.name == name }),
              let file = try? store.openAsset(group: group, generationId: generation, name: name) else {
            return notFound.response
        }
        guard let sha256 = listed.sha256 ?? index.hash(of: file, key: "\(group)/\(generation)/\(name)") else { return notFound.response }
        let tag = Conditional.entityTag(sha256)
        var headers = [("ETag", tag), ("Cache-Control", "public, max-age=31536000, immutable")]
        if Conditional.ifNoneMatch(routed.request.headers["If-None-Match"], matches: tag) {
            var notModified = HTTPResponse(status: 304, headers: headers)
            notModified.body = .lengthOnly(file.size)
            return notModified
        }
        let format = (try? file.read(count: 8)).flatMap(ImageFormat.init(magic:))
        headers.insert(("Content-Type", format.map { "image/\($0.rawValue)" } ?? "application/octet-stream"), at: 0)
        headers.append(("X-Content-Type-Options", "nosniff"))
        return HTTPResponse(file: file, headers: headers)
    }
}

/// Asset lists of generations (immutable once visible) and hashes of files whose generation
/// records none (WidgetBridge's own), so serving an asset parses no JSON and hashes nothing twice.
final class AssetIndexCache: Sendable {
    private let lists = Lock<[String: [AssetInfo]]>([:])
    private let hashes = Lock<[String: (FileStatus, String)]>([:])
    private let capacity = 4096

    func assets(group: String, generation: String, store: FeedStore) -> [AssetInfo]? {
        let key = group + "/" + generation
        if let cached = lists.withLock({ $0[key] }) { return cached }
        guard let assets = store.assetIndex(group: group, generationId: generation) else { return nil }
        lists.withLock { lists in
            if lists.count >= capacity { lists.removeAll() }
            lists[key] = assets
        }
        return assets
    }

    func hash(of file: OpenedFile, key: String) -> String? {
        if let (status, hash) = hashes.withLock({ $0[key] }), status == file.status { return hash }
        guard let bytes = try? file.read(count: file.size) else { return nil }
        let hash = SHA256Hash.hex(bytes)
        hashes.withLock { hashes in
            if hashes.count >= capacity { hashes.removeAll() }
            hashes[key] = (file.status, hash)
        }
        return hash
    }
}
