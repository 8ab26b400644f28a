import FeedStore
import HTTPTransport

extension FeedRoutes {
    /// Largest asset file whose header is read to learn its pixel size.
    static let maxHeaderProbeBytes = 64 << 20

    /// `GET /feeds/{group}/warnings`: the warnings of the served generation with the group's widget
    /// profile, the same checks a publish answer carries (the preview page shows them). Works for generations
    /// written by anyone: an asset whose envelope gives no pixel size is measured from its header.
    func warnings(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try readTarget(routed)
        let key = FeedResponseCache.Key(group: group, schemaVersion: schemaVersion)
        // The group's widget profile, else a guess (an unreadable one is a warning of its own).
        let (stated, unreadable) = PublishLint.storedProfile(store, group: group)
        // An answer made for this folder's state and this profile within the last second is given
        // again without reading or parsing the generation (as listings are).
        let inputs = WarningsInputs(profile: stated, unreadable: unreadable?.detail)
        if let known = warningsCache.lookup(key, inputs: inputs, isCurrent: store.isCurrent) { return known }
        let token = store.folderToken(group: group)
        let read = store.read(group: group, schemaVersion: schemaVersion)
        guard let generation = read.served else { throw Problem.noFeed(group: group, schemaVersion: schemaVersion) }
        let payload =
            (try? JSONDocument.parse(generation.compactPayload, limits: store.configuration.payloadLimits))?.root
            ?? JSONDocument.null.root
        let assets = generation.assets.map { asset -> FeedLint.Asset in
            if let width = asset.width, let height = asset.height {
                return FeedLint.Asset(name: asset.name, width: width, height: height)
            }
            let size = measured(group: group, generation: generation.id, asset: asset)
            return FeedLint.Asset(name: asset.name, width: size?.width, height: size?.height)
        }
        let profile = LintProfile.applying(stated: stated, payload: payload, assetNames: assets.map(\.name))
        let report = PublishLint.adding(
            unreadable,
            to: lint.report(payload: payload, assets: assets, limit: PublishLint.maxListed, profile: profile))
        let body = CompactJSON.bytes(
            .object(
                [
                    JSONMember("group", .string(group)),
                    JSONMember("generationId", .string(generation.id)),
                    JSONMember("fingerprint", .string(generation.fingerprint)),
                ] + PublishLint.members(report)))
        let answer = HTTPResponse.json(200, body + [0x0A], headers: [("Cache-Control", "no-cache")])
        warningsCache.store(key, answer, token: token, inputs: inputs)
        return answer
    }

    /// Width and height from the file's header (WidgetBridge's own generations record none).
    private func measured(group: String, generation: String, asset: AssetInfo) -> (width: Int, height: Int)? {
        guard asset.bytes <= Self.maxHeaderProbeBytes,
            let file = try? store.openAsset(group: group, generationId: generation, name: asset.name),
            let bytes = try? file.read(count: min(file.size, Self.maxHeaderProbeBytes))
        else { return nil }
        return encoder.dimensions(of: .bytes(bytes))
    }
}

/// What a `/warnings` answer is made from besides the group's folder: its widget profile.
struct WarningsInputs: Equatable, Sendable {
    let profile: WidgetProfile?
    let unreadable: String?
}
