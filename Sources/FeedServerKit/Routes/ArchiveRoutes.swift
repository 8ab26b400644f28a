import ConcurrencyPrimitives
import FeedArchive
import FeedImaging
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
    /// `--not-modified-length representation`: a `304` states the tar's length, which may take
    /// measuring it; otherwise it states 0 and nothing is measured.
    var notModifiedStatesLength = false
    /// The archive lengths of generations exported or measured, for their `304`s.
    let sizes = ExportSizes()
    /// Archives already written, shared by the exports of one generation.
    let files = ExportFiles()

    /// The route table entry.
    var route: Route {
        Route(
            "/feeds/{group}/archive",
            methods: [
                "GET": { routed throws(Problem) in try export(routed) },
                "PUT": { routed throws(Problem) in try restore(routed) },
            ],
            bodies: ["PUT": bodies], offloaded: ["GET", "PUT"],
            laneOf: { $0.request.method == "PUT" ? .images : .main })
    }

    private var store: FeedStore { feeds.store }

    // MARK: GET

    /// The served generation (any schema, or `?schemaVersion=N`'s) as a tar, written piece by
    /// piece to a file in the upload area and sent from there (the file is unlinked once open),
    /// so an export never holds a generation in memory; the file is kept for the next exports of
    /// the same generation (`ExportFiles`).
    func export(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let (group, schemaVersion) = try feeds.readTarget(routed)
        let snapshot = store.snapshot(group: group, schemaVersion: schemaVersion)
        guard let generation = snapshot.read.served else { throw .nothingToExport(group: group) }
        let archive: GenerationArchive
        do { archive = try GenerationArchive(store: store, group: group, generation: generation) } catch {
            throw Problem.unreadableProfile(error)
        }
        let tag = archive.entityTag
        var headers = [("ETag", tag), ("Cache-Control", "no-cache"), ("X-Feed-Generation", generation.id)]
        let key = ExportSizes.Key(group: group, generationId: generation.id, entityTag: tag)
        if Conditional.ifNoneMatch(routed.request.headers["If-None-Match"], matches: tag) {
            // Under `--not-modified-length representation`, the length of the `200` it stands for,
            // as the feed's `304` states it (RFC 9110 §8.6); the transport sends 0 otherwise.
            var notModified = HTTPResponse(status: 304, headers: headers)
            notModified.body = .lengthOnly(
                notModifiedStatesLength ? try exportSize(archive, key: key) : 0)
            return notModified
        }
        headers.insert(("Content-Type", "application/x-tar"), at: 0)
        headers.append(("Content-Disposition", "attachment; filename=\"\(group).tar\""))
        return HTTPResponse(file: try exported(archive, key: key, token: snapshot.token), headers: headers)
    }

    /// The archive as an answer's file: the one kept for `key` while the files it was written
    /// from are unchanged, else written now and kept.
    private func exported(
        _ archive: GenerationArchive, key: ExportSizes.Key, token: ChangeToken
    ) throws(Problem) -> ResponseFile {
        if let kept = files.responseFile(key, isCurrent: store.isCurrentNow) { return kept }
        let file: OpenedFile
        let answer: ResponseFile
        do {
            file = try write(archive)
            answer = ResponseFile(takingDescriptor: try file.duplicateDescriptor(), size: file.size)
        } catch {
            throw Self.exportFailed(error, generation: archive.generation, group: archive.group)
        }
        sizes.record(key, file.size)
        files.keep(file, for: key, token: token)
        return answer
    }

    /// The length of the generation's archive: as exported or measured before, else measured
    /// now by writing it to a byte count, each asset passed as zeros of its size, so a `304`
    /// costs no file's worth of data.
    private func exportSize(_ archive: GenerationArchive, key: ExportSizes.Key) throws(Problem) -> Int {
        if let size = sizes.size(key) { return size }
        final class Count { var bytes = 0 }
        let count = Count()
        do {
            try archive.write(readingAssets: false) { count.bytes += $0.count }
        } catch {
            throw Self.exportFailed(error, generation: archive.generation, group: archive.group)
        }
        sizes.record(key, count.bytes)
        return count.bytes
    }

    /// Writes the archive of a generation to a new upload file and opens it for sending.
    private func write(_ archive: GenerationArchive) throws -> OpenedFile {
        let folder = try uploads.makeFolder()
        let spool = try folder.makeFile()
        try archive.write { try spool.append($0) }
        let written = try spool.finish()
        // The folder (and with it the file's name) goes when this returns; the descriptor stays.
        return try PosixFileSystem().openBeneath(folder.path, [String(written.path.split(separator: "/").last ?? "")])
    }

    /// The problem for an export (or its measure) that failed part-way.
    private static func exportFailed(_ error: any Error, generation: Generation, group: String) -> Problem {
        .exportFailed(generation: generation.id, group: group, reason: GenerationArchive.failureReason(error))
    }

    // MARK: PUT

    /// The media types a restore is sent as: a tar, or a gzip-compressed one (libarchive tells
    /// them apart by their bytes, so either type may carry either).
    static let mediaTypes = ["application/x-tar", "application/gzip", "application/x-gzip"]

    /// A tar up to `--max-body-bytes`, judged from the head like every publish.
    private var bodies: BodyPolicy {
        BodyPolicy(
            limits: Dictionary(uniqueKeysWithValues: Self.mediaTypes.map { ($0, feeds.maxBodyBytes) }),
            unsupported: { Problem.unsupportedArchiveMediaType($0) },
            tooLarge: { Problem.bodyTooLarge(bytes: $0, limit: $1) },
            head: { [feeds] head throws(Problem) in _ = try feeds.publishParameters(head) })
    }

    /// Unpacks the tar (every entry checked before anything is published), packs its assets and
    /// publishes it like any other publish.
    func restore(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let request = routed.request
        let (group, parameters) = try feeds.publishParameters(routed)
        try feeds.refuseIfHeld(group)
        guard let type = request.mediaType, Self.mediaTypes.contains(type) else {
            throw bodies.unsupported(request.headers["Content-Type"])
        }
        let limits = ArchiveLimits(
            maxEntries: maxEntries, maxBytes: feeds.maxBodyBytes,
            maxPayloadBytes: store.configuration.maxFeedBytes)
        // Streamed to the request's folder, so they go with it; in memory without one.
        let spool: any AssetSpool = request.uploads.map { UploadFolderSpool(folder: $0) } ?? MemoryAssetSpool()
        let repack = request.query["images"] == "pack" || request.query["images"] == "encode"
        // payload.json is read from the spooled tar into memory: counted as a body kept in memory
        // is, before it is read, and until the publish is answered.
        var counted = 0
        defer { feeds.memory?.release(counted) }
        let (upload, unpackedVersion) = try AssetUpload.unpacking(
            path: request.bodyFile?.path, bytes: request.body, limits: limits, spool: spool,
            options: parameters.uploadOptions, repack: repack, encoder: feeds.encoder, threads: feeds.imagingThreads,
            admitPayload: { size in
                guard let memory = feeds.memory else { return true }
                // At most --max-payload-bytes: the unpacker checks that first.
                let cost = TransportSettings.memoryCost(ofBodyBytes: size)
                guard memory.reserve(cost, nearlyAloneHolding: 0) else { return false }
                counted = cost
                return true
            })
        let schemaVersion = parameters.schemaVersion ?? unpackedVersion
        return try feeds.commit(
            group: group, upload: upload, schemaVersion: schemaVersion, parameters: parameters, counted: counted)
    }
}

extension AssetUpload {
    /// A tar in the seed layout (the file at `path`, or `bytes` without one) unpacked within
    /// `limits`, every entry checked before anything is packed, its assets spooled to `spool`;
    /// then packed as they are, unless `repack`: a dropped asset would change the fingerprint,
    /// so an as-is restore is all or nothing. `PUT /feeds/{group}/archive` and
    /// `feed-server publish` of a tar both come through here.
    static func unpacking(
        path: String?, bytes: [UInt8], limits: ArchiveLimits, spool: any AssetSpool, options: Options, repack: Bool,
        encoder: VipsImageEncoder, threads: Int, admitPayload: (Int) -> Bool = { _ in true }
    ) throws(Problem) -> (upload: AssetUpload, schemaVersion: Int) {
        let unpacked: UnpackedArchive
        do {
            let reader = try ArchiveUnpacker.reader(path: path, bytes: bytes)
            unpacked = try ArchiveUnpacker.unpack(reader, limits: limits, assets: spool, admitPayload: admitPayload)
        } catch {
            throw Problem(error)
        }
        var options = options
        if !repack {
            options.raw = true
            options.strict = true
            options.archiveAsIs = true
        }
        var upload = try pack(
            payload: unpacked.payload, candidates: unpacked.assets, options: options, encoder: encoder,
            threads: threads)
        upload.profile = unpacked.profile
        return (upload, unpacked.schemaVersion)
    }
}

/// The archive lengths of recent generations, so a `304` states its `200`'s length without
/// measuring again. Keyed by generation and fingerprint: one generation always exports the
/// same bytes (every entry carries the generation's time).
final class ExportSizes: Sendable {
    struct Key: Hashable, Sendable {
        var group: String
        var generationId: String
        /// The archive's ETag: its fingerprint and profile.
        var entityTag: String
    }

    /// Most generations remembered; past it the table starts again (a miss costs one measure).
    static let capacity = 1024
    private let sizes = Lock<[Key: Int]>([:])

    /// The archive length of `key`'s generation, when known.
    func size(_ key: Key) -> Int? { sizes.withLock { $0[key] } }

    /// Remembers the archive length of `key`'s generation.
    func record(_ key: Key, _ size: Int) {
        sizes.withLock { sizes in
            if sizes.count >= Self.capacity, sizes[key] == nil { sizes.removeAll(keepingCapacity: true) }
            sizes[key] = size
        }
    }
}
