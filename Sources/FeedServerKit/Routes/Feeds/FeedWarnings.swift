import ConcurrencyPrimitives
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
        if let known = warningsMemo.answer(key, profile: stated, unreadable: unreadable, isCurrent: store.isCurrent) {
            return known
        }
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
        warningsMemo.keep(answer, for: key, token: token, profile: stated, unreadable: unreadable)
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

/// The last `/warnings` answer per group and schema filter, with the folder token taken before
/// it was made and the profile it was made with: reused for a second at most while the folder is
/// unchanged (a generation damaged in place is not in the token), as listings are.
final class WarningsMemo: Sendable {
    private struct Made {
        let token: ChangeToken
        let madeAtNanos: Int64
        let profile: WidgetProfile?
        let unreadable: String?
        let answer: HTTPResponse
    }

    private let answers = Lock<[FeedResponseCache.Key: Made]>([:])
    /// Most answers kept (each a few KiB at most: warnings are capped per code).
    static let capacity = 256

    /// The answer made for this folder state and profile, if one was, within `ListingCache.maxAgeNanos`.
    func answer(
        _ key: FeedResponseCache.Key, profile: WidgetProfile?, unreadable: LintWarning?,
        isCurrent: (ChangeToken) -> Bool
    ) -> HTTPResponse? {
        guard let made = answers.withLock({ $0[key] }), made.profile == profile, made.unreadable == unreadable?.detail,
            MonotonicClock.nanos() - made.madeAtNanos < ListingCache.maxAgeNanos, isCurrent(made.token)
        else { return nil }
        return made.answer
    }

    /// Keeps `answer`, made from a folder whose token (taken before reading it) is `token`.
    func keep(
        _ answer: HTTPResponse, for key: FeedResponseCache.Key, token: ChangeToken, profile: WidgetProfile?,
        unreadable: LintWarning?
    ) {
        answers.withLock { answers in
            if answers.count >= Self.capacity, answers[key] == nil { answers.removeAll(keepingCapacity: true) }
            answers[key] = Made(
                token: token, madeAtNanos: MonotonicClock.nanos(), profile: profile, unreadable: unreadable?.detail,
                answer: answer)
        }
    }
}
