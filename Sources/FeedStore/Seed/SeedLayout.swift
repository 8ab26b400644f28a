/// The seed layout's path rules, for a seed folder's group folders and for archives alike, so
/// what one holds the other can too:
///
///     payload.json     the payload
///     meta.json        optional: `SeedMeta`
///     profile.json     optional: the group's `WidgetProfile`
///     assets/<name>    an asset, under a safe name
package enum SeedLayout {
    /// The payload's file name.
    package static let payloadFile = "payload.json"
    /// The optional `SeedMeta` file's name.
    package static let metaFile = "meta.json"
    /// The optional widget profile's file name.
    package static let profileFile = "profile.json"
    /// The folder of the assets.
    package static let assetsFolder = "assets"

    /// Where a path relative to a group folder belongs.
    package enum Place: Equatable, Sendable {
        /// The group folder itself or `assets/`: nothing to read.
        case folder
        /// `payload.json`.
        case payload
        /// `meta.json`.
        case meta
        /// `profile.json`.
        case profile
        /// `assets/<name>`, with the name.
        case asset(String)
        /// An editor's or a Finder's leftover, which a seed folder and an archive both leave out.
        case skipped
    }

    /// Where `path` (relative, `/`-separated; a leading `./` and, for a folder, a trailing `/`
    /// are allowed) belongs, or why it has no place.
    package static func classify(_ path: String, isFolder: Bool) throws(SeedLayoutError) -> Place {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // `tar -C group .` names every entry `./…`.
        if components.first == "." { components.removeFirst() }
        if isFolder, components.last == "" { components.removeLast() }
        if isLeftover(path) { return .skipped }
        if isFolder {
            guard components.isEmpty || components == [assetsFolder] else { throw .outsideLayout }
            return .folder
        }
        switch components.count {
        case 1 where components[0] == payloadFile: return .payload
        case 1 where components[0] == metaFile: return .meta
        case 1 where components[0] == profileFile: return .profile
        case 2 where components[0] == assetsFolder: return try classifyAsset(components[1])
        default: throw .outsideLayout
        }
    }

    private static func classifyAsset(_ name: String) throws(SeedLayoutError) -> Place {
        if let reason = SafeName.problem(with: name) { throw .unsafeAssetName(name, reason: reason) }
        return .asset(name)
    }

    /// Whether `path` is, or lies in, a Finder's `.DS_Store` or `._name`, a hidden folder, a swap
    /// or backup file, at any depth: skipped by a seed folder and an archive alike (whatever the
    /// entry is, a link included), so `tar -C folder .` is the scenario the folder is.
    package static func isLeftover(_ path: String) -> Bool {
        path.split(separator: "/").contains { $0 != "." && $0 != ".." && isEditorLeftover(String($0)) }
    }

    /// Hidden files, `name~` backups and `.swp`/`.swx` swap files.
    package static func isEditorLeftover(_ name: String) -> Bool {
        name.hasPrefix(".") || name.hasSuffix("~") || name.hasSuffix(".swp") || name.hasSuffix(".swx")
    }
}

/// Why a path has no place in the seed layout.
package enum SeedLayoutError: Error, Equatable, Sendable {
    /// Neither `payload.json`, `meta.json`, `profile.json`, `assets/<name>` nor one of the two folders.
    case outsideLayout
    /// An asset name that is not a safe name, and why (`SafeName.problem(with:)`).
    case unsafeAssetName(String, reason: String)
}
