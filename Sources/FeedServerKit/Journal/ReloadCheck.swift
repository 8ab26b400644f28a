import FeedStore

/// The `invisible-change` check of a publish: with the group's profile, does what it would write
/// show anything the served generation does not? Its bytes may differ (a timestamp, an unused
/// field) while every item's title, subtitle and photo stay the same; such a publish still asks
/// WidgetKit for a reload and spends one of the day's budget.
enum ReloadCheck {
    /// The warning when `upload` (its payload parsed: `new`) changes the served feed's content but
    /// not its view; nil when it shows something new, changes nothing (the publish is
    /// `unchanged`), or there is no feed.
    /// `served`: the generation served before the publish and its payload
    /// (`FeedStore.servedPayload`), nil when there is none; `group` is named in the warning.
    static func invisibleChange(
        _ upload: AssetUpload, payload new: JSONDocument, served: (generation: Generation, document: JSONDocument)?,
        profile: WidgetProfile, group: String
    ) -> LintWarning? {
        guard let (served, old) = served else { return nil }
        let oldDigests = Dictionary(
            served.assets.map { ($0.name, $0.sha256 ?? "\($0.bytes) bytes") }, uniquingKeysWith: { first, _ in first })
        let newDigests = Dictionary(
            upload.packing.packed.map { ($0.name, $0.image.sha256) },
            uniquingKeysWith: { first, _ in first })
        // The same content is an unchanged publish, which asks for no reload.
        guard old.bytes != new.bytes || oldDigests != newDigests else { return nil }
        let visible = VisibleChange.isVisible(
            profile: profile, old: .init(payload: old.root, digests: oldDigests),
            new: .init(payload: new.root, digests: newDigests))
        guard !visible else { return nil }
        return LintWarning(
            code: .invisibleChange,
            detail:
                "This publish changes the feed but nothing its widget profile shows: every item's title, subtitle "
                + "and image stay as generation \(served.id), served before it, had them. It still asks WidgetKit "
                + "for a reload, one of a budget of typically 40 to 70 a day (GET /feeds/\(group)/refreshes): "
                + "publish only what the widget shows, or leave the rest out of the payload.")
    }
}
