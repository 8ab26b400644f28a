import FeedArchive
import FeedStore
import HTTPTransport

/// `GET` and `PUT /feeds/{group}/archive`: a group's served generation as a tar in the seed
/// layout (`payload.json`, `meta.json`, `assets/<name>`), and such a tar published back.
///
/// A restore is a publish like any other (durable, deduplicated, preconditions, lint); its
/// assets are stored as they are (they were packed when first published), so the restored group
/// has the fingerprint of the exported one, unless `?images=pack` packs them again.
struct ArchiveRoutes: Sendable {
    let feeds: FeedRoutes
    /// Where exports are written before they are sent.
    let uploads: UploadArea
    /// `--max-parts`: most entries in an archive.
    let maxEntries: Int

    /// The route table entry.
    var route: Route {
        Route(
            "/feeds/{group}/archive",
            methods: [
                "GET": { routed throws(Problem) in try export(routed) },
                "PUT": { routed throws(Problem) in try restore(routed) },
            ],
            bodies: ["PUT": bodies], offloaded: ["GET", "PUT"])
    }

    private var store: FeedStore { feeds.store }

    // MARK: GET

    /// The served generation (any schema, or `?schemaVersion=N`'s) as a tar, written piece by
    /// piece to a file in the upload area and sent from there (the file is unlinked once open),
    /// so an export never holds a generation in memory.
    func export(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try feeds.readTarget(routed)
        guard let generation = store.read(group: group, schemaVersion: schemaVersion).served else {
            throw .nothingToExport(group: group)
        }
        let tag = Conditional.entityTag(generation.fingerprint)
        var headers = [("ETag", tag), ("Cache-Control", "no-cache"), ("X-Feed-Generation", generation.id)]
        if Conditional.ifNoneMatch(routed.request.headers["If-None-Match"], matches: tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        let archive: OpenedFile
        do { archive = try write(generation, group: group) } catch {
            let reason =
                (error as? FileSystemError).map { "\($0.kind)" } ?? (error as? TarError)?.description ?? "\(error)"
            throw .exportFailed(generation: generation.id, group: group, reason: reason)
        }
        headers.insert(("Content-Type", "application/x-tar"), at: 0)
        headers.append(("Content-Disposition", "attachment; filename=\"\(group).tar\""))
        return HTTPResponse(file: archive.responseFile(), headers: headers)
    }

    /// Writes the archive of a generation to a new upload file and opens it for sending.
    private func write(_ generation: Generation, group: String) throws -> OpenedFile {
        let folder = try uploads.makeFolder()
        let spool = try folder.makeFile()
        let writer = try TarWriter(modificationSeconds: Int(generation.generatedAtEpochMs / 1000)) {
            try spool.append($0)
        }
        let meta = SeedMeta.encoded(
            schemaVersion: generation.schemaVersion, generationId: generation.id,
            fingerprint: generation.fingerprint)
        try writer.addFile(SeedLayout.metaFile, meta)
        try writer.addFile(SeedLayout.payloadFile, generation.compactPayload + [0x0A])
        if !generation.assets.isEmpty { try writer.addDirectory(SeedLayout.assetsFolder) }
        for asset in generation.assets {
            let file = try store.openAsset(group: group, generationId: generation.id, name: asset.name)
            try writer.addFile(SeedLayout.assetsFolder + "/" + asset.name, size: file.size) { emit in
                var offset = 0
                while offset < file.size {
                    let piece = try file.read(count: min(Self.pieceBytes, file.size - offset), at: offset)
                    if piece.isEmpty { break }
                    try piece.withUnsafeBytes(emit)
                    offset += piece.count
                }
            }
        }
        try writer.finish()
        let written = try spool.finish()
        // The folder (and with it the file's name) goes when this returns; the descriptor stays.
        return try PosixFileSystem().openBeneath(folder.path, [String(written.path.split(separator: "/").last ?? "")])
    }

    /// Bytes read from an asset file at a time.
    static let pieceBytes = 256 << 10

    // MARK: PUT

    /// A tar up to `--max-body-bytes`, judged from the head like every publish.
    private var bodies: BodyPolicy {
        BodyPolicy(
            limits: ["application/x-tar": feeds.maxBodyBytes],
            unsupported: { Problem.unsupportedArchiveMediaType($0) },
            tooLarge: { Problem.bodyTooLarge(bytes: $0, limit: $1) })
    }

    /// Unpacks the tar (every entry checked before anything is published), packs its assets and
    /// publishes it like any other publish.
    func restore(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let request = routed.request
        let (group, parameters) = try feeds.publishParameters(routed)
        guard request.mediaType == "application/x-tar" else {
            throw bodies.unsupported(request.headers["Content-Type"])
        }
        let limits = ArchiveLimits(
            maxEntries: maxEntries, maxBytes: feeds.maxBodyBytes,
            maxPayloadBytes: store.configuration.maxFeedBytes)
        let unpacked: UnpackedArchive
        do {
            let reader = try ArchiveUnpacker.reader(path: request.bodyFile?.path, bytes: request.body)
            // Streamed to the request's folder, so they go with it; in memory without one.
            let spool: any AssetSpool = request.uploads.map { UploadFolderSpool(folder: $0) } ?? MemoryAssetSpool()
            unpacked = try ArchiveUnpacker.unpack(reader, limits: limits, assets: spool)
        } catch {
            throw Problem(error)
        }
        var options = parameters.uploadOptions
        // As they are unless asked to pack again: a dropped asset would change the fingerprint,
        // so an as-is restore is all or nothing.
        let repack = request.query["images"] == "pack" || request.query["images"] == "encode"
        if !repack {
            options.raw = true
            options.strict = true
        }
        let upload = try AssetUpload.pack(
            payload: unpacked.payload, candidates: unpacked.assets, options: options,
            encoder: feeds.encoder, threads: feeds.imagingThreads)
        let schemaVersion = parameters.schemaVersion ?? unpacked.schemaVersion
        return try feeds.commit(group: group, upload: upload, schemaVersion: schemaVersion, parameters: parameters)
    }
}
