/// The seed layout's path rules, for a seed folder's group folders and for archives alike, so
/// what one holds the other can too:
///
///     payload.json     the payload
///     meta.json        optional: `SeedMeta`
///     assets/<name>    an asset, under a safe name
package enum SeedLayout {
    /// The payload's file name.
    package static let payloadFile = "payload.json"
    /// The optional `SeedMeta` file's name.
    package static let metaFile = "meta.json"
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
        /// `assets/<name>`, with the name.
        case asset(String)
        /// An editor's leftover beside the assets, which a seed folder leaves out.
        case skipped
    }

    /// Who reads the layout, which decides what becomes of an editor's leftovers.
    package enum Reader: Sendable {
        /// A folder people edit: the swap and backup files editors leave are skipped before
        /// their names are judged, since nobody chose those names.
        case seedFolder
        /// An archive, which holds only what was put in it: a name a seed folder would skip is
        /// refused, since unpacked into a seed folder the archive would not be the same scenario.
        case archive
    }

    /// Where `path` (relative, `/`-separated; a leading `./` and, for a folder, a trailing `/`
    /// are allowed) belongs, or why it has no place.
    package static func classify(_ path: String, isFolder: Bool, for reader: Reader) throws(SeedLayoutError) -> Place {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // `tar -C group .` names every entry `./…`.
        if components.first == "." { components.removeFirst() }
        if isFolder, components.last == "" { components.removeLast() }
        if isFolder {
            guard components.isEmpty || components == [assetsFolder] else { throw .outsideLayout }
            return .folder
        }
        switch components.count {
        case 1 where components[0] == payloadFile: return .payload
        case 1 where components[0] == metaFile: return .meta
        case 2 where components[0] == assetsFolder: return try classifyAsset(components[1], for: reader)
        default: throw .outsideLayout
        }
    }

    private static func classifyAsset(_ name: String, for reader: Reader) throws(SeedLayoutError) -> Place {
        if reader == .seedFolder, isEditorLeftover(name) { return .skipped }
        if let reason = SafeName.problem(with: name) { throw .unsafeAssetName(name, reason: reason) }
        if isEditorLeftover(name) { throw .editorLeftover(name) }
        return .asset(name)
    }

    /// Hidden files, `name~` backups and `.swp`/`.swx` swap files.
    package static func isEditorLeftover(_ name: String) -> Bool {
        name.hasPrefix(".") || name.hasSuffix("~") || name.hasSuffix(".swp") || name.hasSuffix(".swx")
    }
}

/// Why a path has no place in the seed layout.
package enum SeedLayoutError: Error, Equatable, Sendable {
    /// Neither `payload.json`, `meta.json`, `assets/<name>` nor one of the two folders.
    case outsideLayout
    /// An asset name that is not a safe name, and why (`SafeName.problem(with:)`).
    case unsafeAssetName(String, reason: String)
    /// An archive's asset name that a seed folder would skip.
    case editorLeftover(String)
}
