/// The problems of asset reads.
extension Problem {
    /// 400 for an asset path whose segments are not safe names; the same for every such path,
    /// so nothing outside a generation's assets can be probed.
    static var invalidAssetPath: Problem {
        .badRequest(
            "invalid-asset-path", "Invalid asset path",
            "Asset paths are /assets/{group}/{generationId}/{name}, each a safe name (A-Z a-z 0-9 - _ .).")
    }

    /// 404 for an asset the generation does not list, or whose file is gone.
    static func noAsset(_ name: String, generation: String, group: String) -> Problem {
        .notFound("No asset '\(name)' in generation '\(generation)' of group '\(group)'.")
    }
}
