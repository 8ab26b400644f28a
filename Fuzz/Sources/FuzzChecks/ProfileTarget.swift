import FeedStore

/// Widget profiles and what they resolve. The input is a profile's JSON, a NUL byte, a payload's
/// JSON, a NUL byte, and asset names separated by newlines (each part may be missing).
enum ProfileTarget {
    static let target = FuzzTarget(
        name: "profile",
        summary: "WidgetProfile(json:) / WidgetItems / InferredProfile / FeedLint with a profile: an accepted "
            + "profile written back reads as the same profile; every item resolves with its own pointer; an "
            + "inferred profile's items name an array of the payload and its image rule names an asset for at "
            + "least half the items sampled; the lint reports at most one item-image-missing per item and never "
            + "asset-not-found for a file it reports missing.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let parts = input.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
        let profile = try checkProfile(Array(parts[0]))
        guard parts.count > 1, let payload = try? JSONDocument.parse(parts[1], limits: JSONLimits(maxDepth: 32)) else {
            return
        }
        let names =
            parts.count > 2
            ? Array(Set(parts[2].split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) })).sorted() : []
        if let profile { try checkItems(profile, payload.root) }
        let inferred = InferredProfile(payload: payload.root, assetNames: names)
        if let inferred { try checkInferred(inferred, payload.root, names: names) }
        try checkLint(profile, payload.root, names: names)
    }

    /// The profile, when accepted; it must read back the same from what it writes.
    private static func checkProfile(_ bytes: [UInt8]) throws(PropertyViolation) -> WidgetProfile? {
        guard let profile = try? WidgetProfile(json: bytes) else { return nil }
        let again = try? WidgetProfile(json: profile.fileBytes)
        try expect(
            again == profile, "an accepted profile written back reads as the same profile",
            observed: shown(profile.fileBytes))
        return profile
    }

    private static func checkItems(_ profile: WidgetProfile, _ payload: JSONNode) throws(PropertyViolation) {
        let items = WidgetItems(profile: profile, payload: payload)
        guard let array = items.array else { return }
        var failure: PropertyViolation?
        array.forEachElement { index, node in
            guard failure == nil, index < 1_000 else { return }
            let item = items.item(node, index: index)
            if item.pointer != profile.items.text + "/\(index)" {
                failure = PropertyViolation(
                    property: "an item's pointer is the array's and its index", observed: item.pointer)
            }
        }
        if let failure { throw failure }
    }

    private static func checkInferred(
        _ inferred: InferredProfile, _ payload: JSONNode, names: [String]
    ) throws(PropertyViolation) {
        let array = inferred.profile.items.pointer.resolve(in: payload)
        try expect(
            array?.kind == .array, "an inferred items pointer names an array", observed: inferred.profile.items.text)
        guard let image = inferred.profile.image, let array else { return }
        let items = WidgetItems(profile: inferred.profile, payload: payload)
        var sampled = 0
        var named = 0
        array.forEachElement { index, node in
            guard index < 1_000 else { return }
            sampled += 1
            if case .asset(let name) = items.item(node, index: index).image, names.contains(name) { named += 1 }
        }
        try expect(
            named * 2 >= sampled && named > 0, "an inferred image rule names an asset for at least half the items",
            observed: "\(image.text): \(named) of \(sampled)")
    }

    private static func checkLint(
        _ profile: WidgetProfile?, _ payload: JSONNode, names: [String]
    ) throws(PropertyViolation) {
        let assets = names.map { FeedLint.Asset(name: $0, width: 10, height: 10) }
        let applied = LintProfile.applying(stated: profile, payload: payload, assetNames: names)
        let report = FeedLint().report(payload: payload, assets: assets, limit: .max, profile: applied)
        let missing = report.warnings.filter { $0.code == .itemImageMissing }
        let pointers = missing.compactMap(\.pointer)
        try expect(
            Set(pointers).count == pointers.count, "at most one item-image-missing per item",
            observed: "\(pointers.prefix(5))")
        let reported = Set(missing.compactMap(\.asset))
        let doubled = report.warnings.filter { $0.code == .assetNotFound && reported.contains($0.asset ?? "") }
        try expect(
            doubled.isEmpty, "a file reported as item-image-missing is not also asset-not-found",
            observed: "\(doubled.map(\.asset))")
    }
}
