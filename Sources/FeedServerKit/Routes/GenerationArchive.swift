import FeedArchive
import FeedStore

/// A served generation as a tar in the seed layout (`meta.json`, `payload.json`, the group's
/// `profile.json` when it has one, `assets/<name>`): what `GET /feeds/{group}/archive` sends and `feed-server export` prints,
/// entry for entry and byte for byte.
struct GenerationArchive {
    let store: FeedStore
    let group: String
    let generation: Generation
    /// The group's widget profile, carried beside the payload.
    let profile: WidgetProfile?

    /// The archive of `generation` with the group's profile; throws when the group's profile
    /// cannot be read (an archive never leaves out what the group holds without saying so).
    init(store: FeedStore, group: String, generation: Generation) throws(ProfileError) {
        self.store = store
        self.group = group
        self.generation = generation
        profile = try store.profile(group: group)
    }

    /// The archive's strong ETag: the generation's fingerprint, and the profile's hash when the
    /// archive carries one (the same generation with another profile is other bytes).
    var entityTag: String {
        guard let profile else { return Conditional.entityTag(generation.fingerprint) }
        return Conditional.entityTag(generation.fingerprint + "-p" + SHA256Hash.hex(profile.fileBytes).prefix(16))
    }

    /// Bytes read from an asset file at a time.
    static let pieceBytes = 256 << 10
    /// An asset's piece while an archive is measured.
    private static let zeros = [UInt8](repeating: 0, count: pieceBytes)

    /// Writes the whole archive to `output` a piece at a time; without `readingAssets`, each
    /// asset's data is zeros of its stored size (the archive's length is the same, since a tar's
    /// headers and padding follow names and sizes, never bytes).
    func write(readingAssets: Bool = true, to output: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        // Every entry carries the generation's time, so one generation always exports the same bytes.
        let writer = try TarWriter(modificationSeconds: Int(generation.generatedAtEpochMs / 1000), output: output)
        let meta = SeedMeta.encoded(
            schemaVersion: generation.schemaVersion, generationId: generation.id,
            fingerprint: generation.fingerprint)
        try writer.addFile(SeedLayout.metaFile, meta)
        try writer.addFile(SeedLayout.payloadFile, generation.compactPayload + [0x0A])
        if let profile { try writer.addFile(SeedLayout.profileFile, profile.fileBytes) }
        if !generation.assets.isEmpty { try writer.addDirectory(SeedLayout.assetsFolder) }
        for asset in generation.assets {
            let file = try store.openAsset(group: group, generationId: generation.id, name: asset.name)
            try writer.addFile(SeedLayout.assetsFolder + "/" + asset.name, size: file.size) { emit in
                var offset = 0
                while offset < file.size {
                    let count = min(Self.pieceBytes, file.size - offset)
                    guard readingAssets else {
                        try Self.zeros.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
                        offset += count
                        continue
                    }
                    let piece = try file.read(count: count, at: offset)
                    if piece.isEmpty { break }
                    try piece.withUnsafeBytes(emit)
                    offset += piece.count
                }
            }
        }
        try writer.finish()
    }

    /// Why writing (or measuring) an archive failed part-way, in words a client may read: a
    /// file-system error's kind or libarchive's message, never a server path.
    static func failureReason(_ error: any Error) -> String {
        (error as? FileSystemError).map { "\($0.kind)" } ?? (error as? TarError)?.description ?? "\(error)"
    }
}
