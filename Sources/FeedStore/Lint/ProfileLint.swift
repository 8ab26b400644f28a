/// The profile a lint applies: the group's own (every check) or an inferred one (the image
/// check only, since a guess is no ground for the others).
public struct LintProfile: Sendable, Equatable {
    /// The profile.
    public var profile: WidgetProfile
    /// The members guessed (`InferredProfile`); empty for a profile the user stated.
    public var inferred: [String]

    /// Whether it was guessed rather than stated by the user.
    public var isInferred: Bool { !inferred.isEmpty }

    /// The group's own profile.
    public init(stated profile: WidgetProfile) {
        self.profile = profile
        inferred = []
    }

    /// A guessed one.
    public init(_ guess: InferredProfile) {
        profile = guess.profile
        inferred = guess.inferred
    }

    /// The profile to lint `payload` with: the stated one, else a guess from the payload and
    /// its assets, else none.
    public static func applying(stated: WidgetProfile?, payload: JSONNode, assetNames: [String]) -> LintProfile? {
        if let stated { return LintProfile(stated: stated) }
        return InferredProfile(payload: payload, assetNames: assetNames).map(LintProfile.init)
    }
}

/// What a profile finds in a payload: items without their image or title, the assets items use,
/// and whether the items and the empty state are there.
struct ProfileFindings {
    /// An item whose image is not an asset: its index and what the widget looks for.
    struct MissingImage {
        var index: Int
        var image: WidgetItems.Image
    }

    let use: LintProfile
    private(set) var itemsFound = false
    private(set) var missingImages: [MissingImage] = []
    private(set) var missingTitles: [Int] = []
    /// Asset names some item's image is.
    private(set) var used = Set<String>()
    private(set) var emptyFound = true

    init(_ use: LintProfile, payload: JSONNode, assetNames: Set<String>) {
        self.use = use
        let items = WidgetItems(profile: use.profile, payload: payload)
        guard let array = items.array else { return }
        itemsFound = true
        emptyFound = use.profile.empty == nil || items.emptyText != nil
        // Only what the checks need, per item: no item's pointer or texts are made.
        array.forEachElement { index, node in
            let image = items.image(of: node)
            switch image {
            case .asset(let name) where assetNames.contains(name): used.insert(name)
            case .asset, .unnamed: missingImages.append(MissingImage(index: index, image: image))
            case .url, .notDescribed: break
            }
            if let title = use.profile.title, !WidgetItems.hasText(at: title, in: node) { missingTitles.append(index) }
        }
    }

    /// File names the image check reports, which `asset-not-found` then leaves out.
    var reportedNames: Set<String> {
        Set(
            missingImages.compactMap { missing in
                if case .asset(let name) = missing.image { return name }
                return nil
            })
    }

    /// Adds the profile's warnings to `report`: items not found (a stated profile only), items'
    /// missing images, then, for a stated profile, missing titles, unused assets and a missing
    /// empty state. `referenced`: assets a payload string names in full.
    func addWarnings(
        to report: inout LintReport, assets: [FeedLint.Asset], referenced: Set<String>, skipped: [String: String]
    ) {
        let profile = use.profile
        if !itemsFound {
            guard !use.isInferred else { return }
            report.add(.itemsNotFound) {
                LintWarning(
                    code: .itemsNotFound,
                    detail: "The profile's items \(quoted(profile.items.text)) names no array in this payload, so the "
                        + "widget finds no items and every check of an item is skipped.",
                    pointer: profile.items.text)
            }
            return
        }
        for missing in missingImages {
            report.add(.itemImageMissing) { imageWarning(missing, assets: assets, skipped: skipped) }
        }
        guard !use.isInferred else { return }
        for index in missingTitles {
            report.add(.itemTitleMissing) {
                LintWarning(
                    code: .itemTitleMissing,
                    detail: "The item at \(pointer(index)) has no text at \(profile.title?.text ?? "") (the profile's "
                        + "title), so the widget shows no title in the hours it is shown.",
                    pointer: pointer(index))
            }
        }
        if profile.image != nil {
            for asset in assets where !used.contains(asset.name) && !referenced.contains(asset.name) {
                report.add(.assetUnused) {
                    LintWarning(
                        code: .assetUnused,
                        detail: "No item's image is \(asset.name) (\(profile.image?.text ?? "")) and no payload "
                            + "string names it, so no widget will look for it: it is stored and sent for nothing.",
                        asset: asset.name)
                }
            }
        }
        if !emptyFound, let empty = profile.empty {
            report.add(.emptyStateMissing) {
                LintWarning(
                    code: .emptyStateMissing,
                    detail: "The profile's empty state \(quoted(empty.text)) names no text in this payload, so a "
                        + "publish with no items leaves the widget with nothing to show.",
                    pointer: empty.text)
            }
        }
    }

    private func pointer(_ index: Int) -> String { use.profile.items.text + "/\(index)" }

    private func quoted(_ pointer: String) -> String { pointer.isEmpty ? "\"\" (the whole payload)" : pointer }

    private func imageWarning(
        _ missing: MissingImage, assets: [FeedLint.Asset], skipped: [String: String]
    )
        -> LintWarning
    {
        LintWarning.itemImageMissing(
            pointer: pointer(missing.index), image: missing.image, rule: use.profile.image?.text ?? "",
            assetNames: assets.map(\.name), skipped: skipped)
    }
}

extension LintWarning {
    /// How a publish that names images but has none sends them, whichever way it came (the lint
    /// cannot tell an HTTP publish from a seed folder or an archive).
    static let noAssetsAdvice =
        "send the image files with the payload (multipart/form-data parts over HTTP; files under assets/ in a seed "
        + "folder or an archive)."

    /// The `item-image-missing` warning for the item at `pointer` whose `image` (by `rule`) is not
    /// among `assetNames`: the lint's, and the timeline's for the hours it shows the item.
    public static func itemImageMissing(
        pointer: String, image: WidgetItems.Image, rule: String, assetNames: [String], skipped: [String: String] = [:]
    ) -> LintWarning {
        guard case .asset(let name) = image else {
            var reason = "names no image"
            if case .unnamed(let why) = image { reason = why }
            return LintWarning(
                code: .itemImageMissing, detail: "The item at \(pointer) \(reason): the widget shows it with no image.",
                pointer: pointer)
        }
        var detail =
            "The item at \(pointer) shows \(name) (\(rule)), which is not an asset of this generation, so the widget "
            + "shows it with no image in the hours it is shown."
        if let reason = skipped[name] {
            detail += " It was uploaded but not stored: \(reason)."
        } else if let other = assetNames.first(where: { $0.lowercased() == name.lowercased() }) {
            detail += " Did you mean '\(other)'? Asset names are case-sensitive (Android's file system is)."
        } else if assetNames.isEmpty {
            detail += " This publish has no assets at all: " + LintWarning.noAssetsAdvice
        }
        return LintWarning(code: .itemImageMissing, detail: detail, asset: name, pointer: pointer)
    }
}
