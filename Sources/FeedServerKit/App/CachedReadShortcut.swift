import FeedStore
#if canImport(Glibc)
import Glibc
#endif

/// The cached reads answered straight from the access handler (`PreparedAnswers`): `GET` and
/// `HEAD` of `/feeds/{group}` and of `/assets/...`, when their answer is already prepared.
///
/// Gives exactly what the pipeline gives for the same request, and declines (the request then
/// goes through the router and the pipeline) whenever anything would differ: a query string
/// (`?wait`, `?schemaVersion`, a stray `access_token`), a path that needs decoding or is not
/// a plain group or cached asset, a server with a read token (the token check stays in one
/// place), an entry not cached yet or no longer current, or a prepared response that no request
/// has built yet (the pipeline builds it once, with its CORS headers). What it answers is counted
/// in the same metrics.
///
/// A class: the daemon calls it on every request, and one reference is cheaper to pass around
/// than a struct of five (each copy retaining and releasing all of them).
final class CachedReadShortcut: Sendable {
    let feeds: FeedResponseCache
    let assets: AssetRoutes
    let metrics: Metrics
    /// Metrics positions of the two routes.
    let feedRoute: Int
    let assetRoute: Int

    /// A shortcut for a server whose reads are open; nil when reads need a token or the routes
    /// are not in `router`.
    init?(feeds: FeedResponseCache, assets: AssetRoutes, metrics: Metrics, router: Router, authorization: Authorization) {
        guard authorization.readToken == nil,
              let feedRoute = router.routes.first(where: { $0.name == FeedRoutes.readTemplate })?.index,
              let assetRoute = router.routes.first(where: { $0.name == AssetRoutes.template })?.index else { return nil }
        self.feeds = feeds
        self.assets = assets
        self.metrics = metrics
        self.feedRoute = feedRoute
        self.assetRoute = assetRoute
    }

    /// The prepared answer for `head`, or nil to let the pipeline answer.
    func answer(_ head: RequestHead) -> PreparedAnswer? {
        guard !head.hasQuery else { return nil }
        let method: String
        if head.methodIs("GET") { method = "GET" } else if head.methodIs("HEAD") { method = "HEAD" } else { return nil }
        let bytes = head.pathBytes
        if let group = Self.plainSegment(after: Self.feedsPrefix, in: bytes) {
            return feedAnswer(group: group, head: head, method: method)
        }
        if Self.hasPrefix(bytes, Self.assetsPrefix) {
            return assetAnswer(path: head.path, head: head, method: method)
        }
        return nil
    }

    private func feedAnswer(group: UnsafeBufferPointer<UInt8>, head: RequestHead, method: String) -> PreparedAnswer? {
        // The bytes are name characters already (`plainSegment`); the rest of a group name's rules
        // on the bytes, so no String is inspected twice.
        guard group.count <= SafeName.maxLength, !Self.isDotOrDotDot(group), !Self.hasPrefix(group, Self.reservedPrefix) else { return nil }
        guard let entry = feeds.current(.init(group: String(decoding: group, as: UTF8.self), schemaVersion: nil)) else { return nil }
        let notModified = Conditional.ifNoneMatch(cString: head.ifNoneMatch, matches: entry.entityTag)
        // The prepared handle and the figures straight from the entry: copying a whole
        // HTTPResponse here would retain and release its headers and body on every read.
        let prepared = notModified ? entry.notModifiedPrepared : entry.okPrepared
        guard let handle = prepared.existingHandle else { return nil }
        let status = notModified ? 304 : 200, bytes = notModified ? 0 : entry.body.bytes.count
        if entry.isFallback { metrics.recordFallbackServed() }
        metrics.recordRequest(route: feedRoute, method: method, status: status, bytes: bytes)
        metrics.recordPreparedAnswer()
        return PreparedAnswer(owner: prepared, handle: handle, status: status, bodyBytes: bytes)
    }

    private func assetAnswer(path: UnsafePointer<CChar>, head: RequestHead, method: String) -> PreparedAnswer? {
        // The asset cache is keyed by the raw path, and holds only paths that passed its checks.
        guard let entry = assets.currentEntry(path: String(cString: path)) else { return nil }
        let notModified = Conditional.ifNoneMatch(cString: head.ifNoneMatch, matches: entry.entityTag)
        guard let prepared = notModified ? entry.notModifiedPrepared : entry.okPrepared, let handle = prepared.existingHandle else { return nil }
        let status = notModified ? 304 : 200, bytes = notModified ? 0 : entry.size
        metrics.recordRequest(route: assetRoute, method: method, status: status, bytes: bytes)
        metrics.recordPreparedAnswer()
        return PreparedAnswer(owner: prepared, handle: handle, status: status, bodyBytes: bytes, sendsFile: !notModified && method == "GET")
    }

    private static let reservedPrefix = Array(SafeName.reservedGroupPrefix.utf8)
    private static let feedsPrefix = Array("/feeds/".utf8)
    private static let assetsPrefix = Array("/assets/".utf8)

    /// The rest of `path` after `prefix` when it is one segment of name characters (nothing
    /// to decode, no further `/`); nil otherwise.
    private static func plainSegment(after prefix: [UInt8], in path: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard path.count > prefix.count, hasPrefix(path, prefix) else { return nil }
        let rest = UnsafeBufferPointer(rebasing: path[prefix.count...])
        for byte in rest where !SafeName.isAllowed(byte) { return nil }
        return rest
    }

    /// Whether `bytes` starts with `prefix` (`memcmp`: the generic `starts(with:)` walks two
    /// iterators, several times the cost on every read).
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count, let start = bytes.baseAddress else { return false }
        return prefix.withUnsafeBufferPointer { wanted in wanted.baseAddress.map { memcmp(start, $0, prefix.count) == 0 } ?? true }
    }

    /// Whether `name` is `.` or `..`, which are never group names.
    private static func isDotOrDotDot(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        switch name.count {
        case 1: return name[0] == dot
        case 2: return name[0] == dot && name[1] == dot
        default: return false
        }
    }
}
