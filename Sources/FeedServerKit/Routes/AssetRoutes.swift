import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// `GET` and `HEAD /assets/{group}/{generationId}/{name}`: an asset's bytes, sent from the file.
///
/// Path safety: the router decoded each segment exactly once (so `%2F` is a character, not a
/// separator); every segment must be a safe name; the generation must list the name; the file is
/// opened beneath the root without following symlinks. Every refusal is the same generic 400 or
/// 404, so nothing outside a generation's assets can be probed.
struct AssetRoutes: Sendable {
    let store: FeedStore
    let index = AssetIndexCache()
    let responses: AssetResponseCache

    /// Assets of `store`, their answers `private` when `caching` says so.
    init(store: FeedStore, caching: ReadCaching = .shared) {
        self.store = store
        responses = AssetResponseCache(caching: caching)
    }

    /// The route's template.
    static let template = "/assets/{group}/{generationId}/{name}"

    var route: Route {
        // An asset not cached yet means reading its generation's list and opening its file:
        // on the work pool. A cached one is answered where it arrives.
        Route(
            Self.template, methods: ["GET": { routed throws(Problem) in try serve(routed) }], offloaded: ["GET"],
            answeredFromMemory: { currentEntry(path: $0.request.rawPath) != nil }, prepared: { preparedAnswer($0) })
    }

    /// The cached answers for a request path while its file is still the one opened; a stale
    /// entry is dropped at once (closing the file once no connection is sending it), since the
    /// check that found it stale may have been the one its interval allows.
    func currentEntry(path: String) -> AssetResponseCache.Entry? {
        guard let cached = responses.lookup(path), let token = cached.token else { return nil }
        if store.isCurrent(token) { return cached }
        responses.remove(path, ifStill: cached)
        return nil
    }

    /// A cached asset from its prepared answer (nil: not cached, no longer current, or its
    /// answer not built yet). The cache is keyed by the raw path and holds only paths that
    /// passed the checks of `serve`.
    func preparedAnswer(_ request: PreparedRequest) -> PreparedAnswer? {
        guard let entry = currentEntry(path: String(cString: request.head.path)) else { return nil }
        let notModified = Conditional.ifNoneMatch(cString: request.head.ifNoneMatch, matches: entry.entityTag)
        guard let prepared = notModified ? entry.notModifiedPrepared : entry.okPrepared,
            let handle = prepared.existingHandle
        else {
            return nil
        }
        return PreparedAnswer(
            owner: prepared, handle: handle, status: notModified ? 304 : 200, bodyBytes: notModified ? 0 : entry.size,
            sendsFile: !notModified && request.method == "GET")
    }

    func serve(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        // The same path decodes to the same names, so the raw path is the key; an entry exists
        // only for a path whose names passed the checks below.
        let key = routed.request.rawPath
        if let cached = currentEntry(path: key) { return cached.answer(to: routed.request.headers) }
        let (group, generation, name) = (routed.parameters[0], routed.parameters[1], routed.parameters[2])
        guard SafeName.isGroupName(group), SafeName.isSafe(generation), SafeName.isSafe(name) else {
            throw Problem.invalidAssetPath
        }
        let notFound = Problem.noAsset(name, generation: generation, group: group)
        guard
            let listed = index.assets(group: group, generation: generation, store: store)?.first(where: {
                $0.name == name
            }),
            let (file, token) = try? store.openAssetForReuse(group: group, generationId: generation, name: name)
        else {
            throw notFound
        }
        guard let sha256 = listed.sha256 ?? index.hash(of: file, key: "\(group)/\(generation)/\(name)") else {
            throw notFound
        }
        let tag = Conditional.entityTag(sha256)
        let format = (try? file.read(count: 8)).flatMap(ImageFormat.init(magic:))
        let entry = AssetResponseCache.Entry(
            file: file, entityTag: tag,
            contentType: format.map { "image/\($0.rawValue)" } ?? "application/octet-stream",
            cacheControl: responses.cacheControl, token: token)
        if token != nil { responses.store(key, entry) { store.isCurrentNow($0) } }
        return entry.answer(to: routed.request.headers)
    }
}

/// Prepared answers for assets, by request path: the file stays open and its `200` and `304`
/// are built once, so a repeated asset read costs the `sendfile` and no other system call. The
/// entry's token checks at most once a second that the path still names the file that was opened
/// (`FeedStore.assetProbeIntervalMs`): an asset removed (retention, `DELETE`) or damaged in place
/// is answered from the open file for at most that long. Publishes never change a visible asset.
///
/// An open file keeps a removed generation's disk space in use, so entries whose file is gone
/// are dropped when they are next read and, all of them, whenever a new asset is added (the
/// next read of an asset not seen before, typically right after a publish). At most `capacity`
/// files are open.
///
/// `Cache-Control` is decided when the server starts (`ReadCaching`): built into both answers
/// once, it costs nothing per request and the prepared answers stay one for every client.
final class AssetResponseCache: Sendable {
    /// One asset's answers.
    final class Entry: Sendable {
        let token: ChangeToken?
        let entityTag: String
        let ok: HTTPResponse
        let notModified: HTTPResponse
        /// The prepared `MHD_Response`s of `ok` and `notModified` (only with a token).
        let okPrepared: PreparedResponse?
        let notModifiedPrepared: PreparedResponse?
        /// The file's size, the `200`'s body bytes.
        let size: Int

        init(file: OpenedFile, entityTag: String, contentType: String, cacheControl: String, token: ChangeToken?) {
            self.token = token
            self.entityTag = entityTag
            size = file.size
            okPrepared = token == nil ? nil : PreparedResponse()
            notModifiedPrepared = token == nil ? nil : PreparedResponse()
            // nosniff in both: a cache that freshens a stored 200 with the 304's headers keeps it.
            let headers = [("ETag", entityTag), ("Cache-Control", cacheControl), ("X-Content-Type-Options", "nosniff")]
            var ok = HTTPResponse(status: 200, headers: [("Content-Type", contentType)] + headers)
            ok.body = .sharedFile(file.responseFile())
            var notModified = HTTPResponse(status: 304, headers: headers)
            notModified.body = .lengthOnly(file.size)
            ok.prepared = okPrepared
            notModified.prepared = notModifiedPrepared
            self.ok = ok
            self.notModified = notModified
        }

        /// The `304` when the request's `If-None-Match` matches, else the `200`.
        func answer(to headers: RequestFields) -> HTTPResponse {
            Conditional.ifNoneMatch(in: headers, matches: entityTag) ? notModified : ok
        }
    }

    private let entries = Lock<[String: Entry]>([:])
    /// The `Cache-Control` of every answer.
    let cacheControl: String
    /// Most assets kept open at once (each holds a descriptor).
    static let capacity = 256

    /// A cache whose answers say what `caching` decides.
    init(caching: ReadCaching) {
        cacheControl = caching.assets
    }

    /// The entry for a request path, if any (its token still has to be checked).
    func lookup(_ path: String) -> Entry? { entries.withLock { $0[path] } }

    /// Keeps an entry, first dropping those whose file is gone (checked outside the lock); a
    /// full cache starts over (closing the files nobody is sending).
    func store(_ path: String, _ entry: Entry, isCurrent: (ChangeToken) -> Bool) {
        let gone = entries.withLock { $0 }.compactMap { key, cached in cached.token.map(isCurrent) == true ? nil : key }
        entries.withLock { entries in
            for key in gone { entries.removeValue(forKey: key) }
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[path] = entry
        }
    }

    /// Drops the entry for `path` if it is still `entry`.
    func remove(_ path: String, ifStill entry: Entry) {
        entries.withLock { entries in
            if entries[path] === entry { entries.removeValue(forKey: path) }
        }
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
