#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A seed folder: one sub-folder per group, each a scenario in the layout an archive unpacks to:
///
///     <group>/payload.json     the payload (any JSON text)
///     <group>/meta.json        optional: {"schemaVersion": N} (default 1); other members ignored
///     <group>/assets/<name>    images, packed by the publisher's budget like a multipart publish
///
/// Reading follows no symbolic link and takes regular files only; which paths belong, and what
/// is skipped, is `SeedLayout`'s. Every read starts from one descriptor of the seed folder and
/// opens each component relative to its parent's (`SeedDirectory`), so swapping a folder for a
/// link mid-read cannot lead it outside, and a FIFO in a file's place is refused, never waited on.
public struct SeedFolder: Sendable {
    /// The folder.
    public let path: String
    /// Called with the path (relative to the folder) of each component just before it is opened:
    /// where tests swap a file or folder, deterministically, between a check and a read.
    private let beforeOpening: (@Sendable (String) -> Void)?

    /// A seed folder at `path`.
    public init(path: String) { self.init(path: path, beforeOpening: nil) }

    /// A seed folder at `path` that calls `beforeOpening` before opening anything in it.
    package init(path: String, beforeOpening: (@Sendable (String) -> Void)?) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.beforeOpening = beforeOpening
    }

    /// The group folders (safe group names, not hidden), sorted; other entries are ignored.
    public func groups() throws(SeedError) -> [String] {
        let root = try openRoot()
        let entries: [DirectoryEntry]
        do { entries = try root.entries() } catch {
            throw SeedError("the seed folder cannot be listed (\(error.kind))")
        }
        return entries.filter { $0.isDirectory && Self.isGroupFolder($0.name) }.map(\.name).sorted()
    }

    /// Top-level entries that are not groups (a symbolic link, a file, an unsafe or reserved
    /// name), with why, so the start-up log can say what it left out; editor leftovers and
    /// hidden entries are not listed. Empty when the folder cannot be listed (`groups()` reports
    /// that).
    public func ignoredEntries() -> [(name: String, reason: String)] {
        guard let entries = try? openRoot().entries() else { return [] }
        return entries.sorted { $0.name < $1.name }.compactMap { entry in
            if Self.isEditorLeftover(entry.name) { return nil }
            if !entry.isDirectory {
                return (entry.name, "is not a folder (group folders are real folders; links are not followed)")
            }
            if !SafeName.isGroupName(entry.name) { return (entry.name, "is not a usable group name") }
            return nil
        }
    }

    /// Whether a top-level entry's name makes a group: a safe group name that is not hidden
    /// (WidgetBridge's own reader skips hidden entries, so a `.name` folder is no scenario of it).
    public static func isGroupFolder(_ name: String) -> Bool {
        SafeName.isGroupName(name) && !name.hasPrefix(".")
    }

    /// The folder of one group.
    public func groupPath(_ group: String) -> String { path + "/" + group }

    /// Reads one group: its payload (at most `maxPayloadBytes`), schema version and assets (at
    /// most `maxAssets` of them and `maxAssetBytes` together, as a multipart body is bounded),
    /// each asset copied into a file of `spool` as a multipart part is (in memory without one).
    public func read(
        group: String, maxPayloadBytes: Int, maxAssets: Int, maxAssetBytes: Int, spool: UploadFolder? = nil
    ) throws(SeedError) -> SeedGroup {
        guard SafeName.isGroupName(group) else { throw SeedError("'\(LogSafe.name(group))' is not a safe group name") }
        guard Self.isGroupFolder(group) else {
            throw SeedError("'\(group)' is hidden, and hidden folders are not groups")
        }
        let root = try openRoot()
        let folder: SeedDirectory
        do { folder = try root.openFolder(group) } catch {
            switch error.kind {
            case .notFound, .notADirectory, .symbolicLink: throw SeedError("\(group)/ is not a folder")
            default: throw SeedError("\(group)/ cannot be opened (\(error.kind))")
            }
        }
        return try contents(
            of: folder, shown: group, maxPayloadBytes: maxPayloadBytes, maxAssets: maxAssets,
            maxAssetBytes: maxAssetBytes, spool: spool)
    }

    /// Reads this folder itself as one group folder (`feed-server publish GROUP FOLDER`), by the
    /// rules and within the limits of `read(group:…)`; its own name is free, since the group is
    /// named apart. Messages name paths from the folder's last component on.
    public func readAsGroup(maxPayloadBytes: Int, maxAssets: Int, maxAssetBytes: Int) throws(SeedError) -> SeedGroup {
        let folder = try openRoot()
        let shown = path.split(separator: "/").last.map(String.init) ?? path
        return try contents(
            of: folder, shown: LogSafe.name(shown), maxPayloadBytes: maxPayloadBytes, maxAssets: maxAssets,
            maxAssetBytes: maxAssetBytes)
    }

    /// The payload, schema version and assets of an open group folder, shown as `group`.
    private func contents(
        of folder: SeedDirectory, shown group: String, maxPayloadBytes: Int, maxAssets: Int, maxAssetBytes: Int,
        spool: UploadFolder? = nil
    ) throws(SeedError) -> SeedGroup {
        let payloadFile = SeedLayout.payloadFile
        let metaFile = SeedLayout.metaFile
        let payload = try readRegular(payloadFile, in: folder, shown: "\(group)/\(payloadFile)", limit: maxPayloadBytes)
        var schemaVersion = 1
        if let meta = try readIfPresent(metaFile, in: folder, shown: "\(group)/\(metaFile)", limit: SeedMeta.maxBytes) {
            do { schemaVersion = try SeedMeta.schemaVersion(of: meta) } catch {
                throw SeedError("\(group)/\(metaFile): \(error.description)")
            }
        }
        let profileFile = SeedLayout.profileFile
        var profile: WidgetProfile?
        if let bytes = try readIfPresent(
            profileFile, in: folder, shown: "\(group)/\(profileFile)", limit: WidgetProfile.maxBytes)
        {
            do { profile = try WidgetProfile(json: bytes) } catch {
                throw SeedError("\(group)/\(profileFile): \(error.detail)")
            }
        }
        let assets = try readAssets(
            in: folder, group: group, maxAssets: maxAssets, maxAssetBytes: maxAssetBytes, spool: spool)
        return SeedGroup(payload: payload, schemaVersion: schemaVersion, assets: assets, profile: profile)
    }

    private func readAssets(
        in folder: SeedDirectory, group: String, maxAssets: Int, maxAssetBytes: Int, spool: UploadFolder?
    ) throws(SeedError) -> [AssetBudget.Candidate] {
        let assetsFolder: SeedDirectory
        do { assetsFolder = try folder.openFolder(SeedLayout.assetsFolder) } catch {
            switch error.kind {
            case .notFound: return []
            case .notADirectory, .symbolicLink: throw SeedError("\(group)/assets is not a folder")
            default: throw SeedError("\(group)/assets cannot be listed (\(error.kind))")
            }
        }
        let entries: [DirectoryEntry]
        do { entries = try assetsFolder.entries() } catch {
            throw SeedError("\(group)/assets cannot be listed (\(error.kind))")
        }
        var assets: [AssetBudget.Candidate] = []
        var totalBytes = 0
        for entry in entries.sorted(by: { $0.name < $1.name }) {
            // The name alone decides; a folder or link under a good name is refused when read.
            guard let name = try Self.assetName(entry.name, group: group) else { continue }
            guard assets.count < maxAssets else {
                throw SeedError("\(group)/assets holds more than \(maxAssets) files (--max-parts)")
            }
            let left = maxAssetBytes - totalBytes
            if let size = assetsFolder.status(name)?.size, size > left {
                throw SeedError(
                    "\(group)/assets holds more than \(maxAssetBytes) bytes in all (--max-body-bytes, as for a "
                        + "multipart publish)"
                )
            }
            let source = try readAsset(name, in: assetsFolder, shown: "\(group)/assets/\(name)", limit: left, spool)
            totalBytes += source.byteCount
            assets.append(AssetBudget.Candidate(name: name, source: source))
        }
        return assets
    }

    /// Hidden files, `name~` backups and `.swp`/`.swx` swap files (`SeedLayout`'s rule).
    public static func isEditorLeftover(_ name: String) -> Bool { SeedLayout.isEditorLeftover(name) }

    /// The asset an entry of `assets/` is, or nil for one the layout skips.
    private static func assetName(_ entry: String, group: String) throws(SeedError) -> String? {
        // A listed name holds no `/`, so it is an asset, skipped, or an unsafe name.
        let outside = SeedError("\(group)/assets/\(LogSafe.name(entry)) is not part of the seed layout")
        let place: SeedLayout.Place
        do {
            place = try SeedLayout.classify(SeedLayout.assetsFolder + "/" + entry, isFolder: false)
        } catch {
            guard case .unsafeAssetName(let name, let reason) = error else { throw outside }
            throw SeedError("asset name '\(LogSafe.name(name))' \(reason)")
        }
        switch place {
        case .asset(let name): return name
        case .skipped: return nil
        case .folder, .payload, .meta, .profile: throw outside
        }
    }

    private func openRoot() throws(SeedError) -> SeedDirectory {
        do { return try SeedDirectory.openRoot(path, beforeOpening: beforeOpening) } catch {
            switch error.kind {
            case .notFound, .notADirectory, .symbolicLink: throw SeedError("the seed folder is not a folder")
            default: throw SeedError("the seed folder cannot be listed (\(error.kind))")
            }
        }
    }

    /// The asset file `name` of `folder`: copied into a file of `spool`, or read into memory
    /// without one.
    private func readAsset(
        _ name: String, in folder: SeedDirectory, shown: String, limit: Int, _ spool: UploadFolder?
    ) throws(SeedError) -> AssetSource {
        guard let spool else { return .bytes(try readRegular(name, in: folder, shown: shown, limit: limit)) }
        let file = try openRegular(name, in: folder, shown: shown, limit: limit)
        do {
            let copy = try spool.makeFile()
            _ = try file.copy(into: copy, limit: limit)
            return .file(try copy.finish())
        } catch let error as FileSystemError where error.kind == .tooLarge {
            throw SeedError("\(shown) has more than \(limit) bytes")
        } catch {
            throw SeedError("\(shown) cannot be copied for packing (\((error as? FileSystemError)?.kind ?? .other))")
        }
    }

    /// The regular file `name` of `folder`; a missing one is an error.
    private func readRegular(
        _ name: String, in folder: SeedDirectory, shown: String, limit: Int
    ) throws(SeedError) -> [UInt8] {
        guard let bytes = try readIfPresent(name, in: folder, shown: shown, limit: limit) else {
            throw SeedError("\(shown) is missing")
        }
        return bytes
    }

    /// The regular file `name` of `folder`, or nil when there is no such entry, read no further
    /// than `limit` (`openIfPresent`).
    private func readIfPresent(
        _ name: String, in folder: SeedDirectory, shown: String, limit: Int
    ) throws(SeedError) -> [UInt8]? {
        guard let file = try openIfPresent(name, in: folder, shown: shown, limit: limit) else { return nil }
        do { return try file.read(limit: limit) } catch {
            throw SeedError("\(shown) cannot be read (\(error.kind))")
        }
    }

    /// The regular file `name` of `folder`, open; a missing one is an error.
    private func openRegular(
        _ name: String, in folder: SeedDirectory, shown: String, limit: Int
    ) throws(SeedError) -> SeedFile {
        guard let file = try openIfPresent(name, in: folder, shown: shown, limit: limit) else {
            throw SeedError("\(shown) is missing")
        }
        return file
    }

    /// The regular file `name` of `folder`, or nil when there is no such entry: opened without
    /// following a link and without waiting (a FIFO opens at once), and checked with `fstat`
    /// (a regular file of at most `limit` bytes) before a byte is read.
    private func openIfPresent(
        _ name: String, in folder: SeedDirectory, shown: String, limit: Int
    ) throws(SeedError) -> SeedFile? {
        let notRegular = SeedError("\(shown) is not a regular file (links are not followed)")
        let file: SeedFile
        do { file = try folder.openFile(name) } catch {
            if error.kind == .notFound { return nil }
            // ENXIO: a socket (or a device without a driver), which is no regular file either.
            if error.kind == .symbolicLink || error.errno == ENXIO { throw notRegular }
            throw SeedError("\(shown) cannot be read (\(error.kind))")
        }
        guard file.status.kind == .regular else { throw notRegular }
        let size = file.status.size
        guard size <= limit else { throw SeedError("\(shown) has \(size) bytes; the limit is \(limit)") }
        return file
    }
}

/// One group of a seed folder, ready to pack and publish.
public struct SeedGroup: Sendable {
    /// The payload bytes as found (any JSON text; the publish canonicalizes it).
    public var payload: [UInt8]
    /// From `meta.json`, 1 without one.
    public var schemaVersion: Int
    /// The files of `assets/`, sorted by name.
    public var assets: [AssetBudget.Candidate]
    /// From `profile.json`; nil without one.
    public var profile: WidgetProfile?
}

/// Why a seed group (or the seed folder) cannot be read; the description names paths relative
/// to the seed folder only.
public struct SeedError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// `meta.json` of a seed group or archive: `{"schemaVersion": N}`, and in an export, for
/// information, the generation id and fingerprint it came from.
public enum SeedMeta {
    /// Largest `meta.json` read.
    public static let maxBytes = 64 << 10

    /// The schema version a `meta.json` names (1 when it names none).
    public static func schemaVersion(of bytes: [UInt8]) throws(SeedError) -> Int {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw SeedError("not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard case .object = value else { throw SeedError("must be a JSON object") }
        guard let member = value["schemaVersion"] else { return 1 }
        guard let version = member.integerValue, (0...Int64(Int32.max)).contains(version) else {
            throw SeedError("schemaVersion must be an integer from 0 to 2147483647")
        }
        return Int(version)
    }

    /// The `meta.json` of an export.
    public static func encoded(schemaVersion: Int, generationId: String, fingerprint: String) -> [UInt8] {
        CompactJSON.bytes(
            .object([
                JSONMember("schemaVersion", .number(String(schemaVersion))),
                JSONMember("generationId", .string(generationId)),
                JSONMember("fingerprint", .string(fingerprint)),
            ])) + [0x0A]
    }
}
