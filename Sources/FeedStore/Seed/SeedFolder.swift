/// A seed folder: one sub-folder per group, each a scenario in the layout an archive unpacks to:
///
///     <group>/payload.json     the payload (any JSON text)
///     <group>/meta.json        optional: {"schemaVersion": N} (default 1); other members ignored
///     <group>/assets/<name>    images, packed by the publisher's budget like a multipart publish
///
/// Reading follows no symbolic link and takes regular files only; which paths belong, and what
/// is skipped, is `SeedLayout`'s.
public struct SeedFolder: Sendable {
    /// The folder.
    public let path: String
    private let fileSystem = PosixFileSystem()

    /// A seed folder at `path`.
    public init(path: String) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// The group folders (safe group names), sorted; other entries are ignored.
    public func groups() throws(SeedError) -> [String] {
        guard fileSystem.status(path)?.kind == .directory else { throw SeedError("the seed folder is not a folder") }
        let entries: [DirectoryEntry]
        do { entries = try fileSystem.listDirectory(path) } catch {
            throw SeedError("the seed folder cannot be listed (\(Self.kind(of: error)))")
        }
        return entries.filter { $0.isDirectory && SafeName.isGroupName($0.name) }.map(\.name).sorted()
    }

    /// Top-level entries that are not groups (a symbolic link, a file, an unsafe or reserved
    /// name), with why, so the start-up log can say what it left out; editor leftovers are not
    /// listed. Empty when the folder cannot be listed (`groups()` reports that).
    public func ignoredEntries() -> [(name: String, reason: String)] {
        guard let entries = try? fileSystem.listDirectory(path) else { return [] }
        return entries.sorted { $0.name < $1.name }.compactMap { entry in
            if Self.isEditorLeftover(entry.name) { return nil }
            if !entry.isDirectory {
                return (entry.name, "is not a folder (group folders are real folders; links are not followed)")
            }
            if !SafeName.isGroupName(entry.name) { return (entry.name, "is not a usable group name") }
            return nil
        }
    }

    /// The folder of one group.
    public func groupPath(_ group: String) -> String { path + "/" + group }

    /// Reads one group: its payload (at most `maxPayloadBytes`), schema version and assets (at
    /// most `maxAssets` of them and `maxAssetBytes` together, as a multipart body is bounded;
    /// kept in memory: seeds are test fixtures).
    public func read(
        group: String, maxPayloadBytes: Int, maxAssets: Int, maxAssetBytes: Int
    ) throws(SeedError) -> SeedGroup {
        guard SafeName.isGroupName(group) else { throw SeedError("'\(group)' is not a safe group name") }
        let folder = groupPath(group)
        guard fileSystem.status(folder)?.kind == .directory else { throw SeedError("\(group)/ is not a folder") }
        let payloadFile = SeedLayout.payloadFile
        let metaFile = SeedLayout.metaFile
        let payload = try readRegular(
            folder + "/" + payloadFile, shown: "\(group)/\(payloadFile)", limit: maxPayloadBytes)
        var schemaVersion = 1
        if fileSystem.status(folder + "/" + metaFile) != nil {
            let meta = try readRegular(folder + "/" + metaFile, shown: "\(group)/\(metaFile)", limit: SeedMeta.maxBytes)
            do { schemaVersion = try SeedMeta.schemaVersion(of: meta) } catch {
                throw SeedError("\(group)/\(metaFile): \(error.description)")
            }
        }
        var assets: [AssetBudget.Candidate] = []
        var totalBytes = 0
        let assetsFolder = folder + "/" + SeedLayout.assetsFolder
        if let status = fileSystem.status(assetsFolder) {
            guard status.kind == .directory else { throw SeedError("\(group)/assets is not a folder") }
            let entries: [DirectoryEntry]
            do { entries = try fileSystem.listDirectory(assetsFolder) } catch {
                throw SeedError("\(group)/assets cannot be listed (\(Self.kind(of: error)))")
            }
            for entry in entries.sorted(by: { $0.name < $1.name }) {
                // The name alone decides; a folder or link under a good name is refused when read.
                guard let name = try Self.assetName(entry.name, group: group) else { continue }
                guard assets.count < maxAssets else {
                    throw SeedError("\(group)/assets holds more than \(maxAssets) files (--max-parts)")
                }
                let left = maxAssetBytes - totalBytes
                let file = assetsFolder + "/" + name
                if let size = fileSystem.status(file)?.size, size > left {
                    throw SeedError(
                        "\(group)/assets holds more than \(maxAssetBytes) bytes in all (--max-body-bytes, as for a "
                            + "multipart publish)"
                    )
                }
                let bytes = try readRegular(file, shown: "\(group)/assets/\(name)", limit: left)
                totalBytes += bytes.count
                assets.append(AssetBudget.Candidate(name: name, source: bytes))
            }
        }
        return SeedGroup(payload: payload, schemaVersion: schemaVersion, assets: assets)
    }

    /// Hidden files, `name~` backups and `.swp`/`.swx` swap files (`SeedLayout`'s rule).
    public static func isEditorLeftover(_ name: String) -> Bool { SeedLayout.isEditorLeftover(name) }

    /// The asset an entry of `assets/` is, or nil for one the layout skips.
    private static func assetName(_ entry: String, group: String) throws(SeedError) -> String? {
        // A listed name holds no `/`, so it is an asset, skipped, or an unsafe name.
        let outside = SeedError("\(group)/assets/\(entry) is not part of the seed layout")
        let place: SeedLayout.Place
        do {
            place = try SeedLayout.classify(SeedLayout.assetsFolder + "/" + entry, isFolder: false, for: .seedFolder)
        } catch {
            guard case .unsafeAssetName(let name, let reason) = error else { throw outside }
            throw SeedError("asset name '\(name)' \(reason)")
        }
        switch place {
        case .asset(let name): return name
        case .skipped: return nil
        case .folder, .payload, .meta: throw outside
        }
    }

    private func readRegular(_ file: String, shown: String, limit: Int) throws(SeedError) -> [UInt8] {
        guard let status = fileSystem.status(file) else { throw SeedError("\(shown) is missing") }
        guard status.kind == .regular else {
            throw SeedError("\(shown) is not a regular file (links are not followed)")
        }
        guard status.size <= limit else { throw SeedError("\(shown) has \(status.size) bytes; the limit is \(limit)") }
        do { return try fileSystem.readFile(file, limit: limit) } catch {
            throw SeedError("\(shown) cannot be read (\(Self.kind(of: error)))")
        }
    }

    private static func kind(of error: any Error) -> String {
        (error as? FileSystemError).map { "\($0.kind)" } ?? "\(error)"
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
