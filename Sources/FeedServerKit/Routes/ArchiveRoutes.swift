import FeedStore
import HTTPTransport
import FeedArchive

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
        Route("/feeds/{group}/archive", methods: ["GET": { export($0) }, "PUT": { restore($0) }],
              bodies: ["PUT": bodies], offloaded: ["GET", "PUT"])
    }

    private var store: FeedStore { feeds.store }

    // MARK: GET

    /// The served generation (any schema, or `?schemaVersion=N`'s) as a tar, written piece by
    /// piece to a file in the upload area and sent from there (the file is unlinked once open),
    /// so an export never holds a generation in memory.
    func export(_ routed: RoutedRequest) -> HTTPResponse {
        let group: String, schemaVersion: Int?
        do { (group, schemaVersion) = try feeds.readTarget(routed) } catch { return error.response }
        guard let generation = store.read(group: group, schemaVersion: schemaVersion).served else {
            return Problem.notFound("Group '\(group)' has no readable generation to export.").response
        }
        let tag = Conditional.entityTag(generation.fingerprint)
        var headers = [("ETag", tag), ("Cache-Control", "no-cache"), ("X-Feed-Generation", generation.id)]
        if Conditional.ifNoneMatch(routed.request.headers["If-None-Match"], matches: tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        do {
            let archive = try write(generation, group: group)
            headers.insert(("Content-Type", "application/x-tar"), at: 0)
            headers.append(("Content-Disposition", "attachment; filename=\"\(group).tar\""))
            return HTTPResponse(file: archive.responseFile(), headers: headers)
        } catch {
            // Most likely the generation was retired and removed while it was read: the next
            // try gets the new one.
            let reason = (error as? FileSystemError).map { "\($0.kind)" } ?? (error as? TarError)?.description ?? "\(error)"
            return Problem(status: 503, type: "export-failed", title: "Export failed",
                           detail: "Generation \(generation.id) of group '\(group)' could not be archived (\(reason)); try again.",
                           headers: [("Retry-After", "1")]).response
        }
    }

    /// Writes the archive of a generation to a new upload file and opens it for sending.
    private func write(_ generation: Generation, group: String) throws -> OpenedFile {
        let folder = try uploads.makeFolder()
        let spool = try folder.makeFile()
        let writer = try TarWriter(modificationSeconds: Int(generation.generatedAtEpochMs / 1000)) { try spool.append($0) }
        try writer.addFile("meta.json", SeedMeta.encoded(schemaVersion: generation.schemaVersion, generationId: generation.id,
                                                         fingerprint: generation.fingerprint))
        try writer.addFile("payload.json", generation.compactPayload + [0x0A])
        if !generation.assets.isEmpty { try writer.addDirectory("assets") }
        for asset in generation.assets {
            let file = try store.openAsset(group: group, generationId: generation.id, name: asset.name)
            try writer.addFile("assets/" + asset.name, size: file.size) { emit in
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
            unsupported: { sent in
                Problem(status: 415, type: "unsupported-media-type", title: "Unsupported media type",
                        detail: "Send the archive as application/x-tar, an uncompressed tar in the layout GET /feeds/{group}/archive returns (got \(sent ?? "no Content-Type")).",
                        headers: [("Accept-Put", "application/x-tar")])
            },
            tooLarge: { bytes, limit in
                Problem(status: 413, type: "body-too-large", title: "Request body too large",
                        detail: "The request body has \(bytes) bytes; the limit is \(limit) (--max-body-bytes).")
            })
    }

    func restore(_ routed: RoutedRequest) -> HTTPResponse {
        let request = routed.request
        let group: String, parameters: FeedRoutes.PublishParameters
        do { (group, parameters) = try feeds.publishParameters(routed) } catch { return error.response }
        guard request.mediaType == "application/x-tar" else { return bodies.unsupported(request.headers["Content-Type"]).response }
        let reader: TarReader
        do {
            reader = try request.bodyFile.map { try TarReader(path: $0.path) } ?? TarReader(bytes: request.body)
        } catch {
            return Self.malformed("\(error)").response
        }
        let limits = Limits(maxEntries: maxEntries, maxBytes: feeds.maxBodyBytes, maxPayloadBytes: store.configuration.maxFeedBytes)
        let unpacked: UnpackedArchive
        switch Self.unpack(reader, limits: limits, into: request.uploads) {
        case .failure(let problem): return problem.response
        case .success(let archive): unpacked = archive
        }
        var options = parameters.uploadOptions
        // As they are unless asked to pack again: a dropped asset would change the fingerprint,
        // so an as-is restore is all or nothing.
        let repack = request.query["images"] == "pack" || request.query["images"] == "encode"
        if !repack {
            options.raw = true
            options.strict = true
        }
        let upload: AssetUpload
        do {
            upload = try AssetUpload.pack(payload: unpacked.payload, candidates: unpacked.assets, options: options,
                                          encoder: feeds.encoder, threads: feeds.imagingThreads)
            return try feeds.commit(group: group, upload: upload, schemaVersion: parameters.schemaVersion ?? unpacked.schemaVersion, parameters: parameters)
        } catch {
            return error.response
        }
    }

    /// What an archive held.
    struct UnpackedArchive {
        var payload: [UInt8]
        var schemaVersion: Int
        var assets: [AssetBudget.Candidate]
    }

    /// The bounds an archive is read within.
    struct Limits {
        /// `--max-parts`: most entries.
        var maxEntries: Int
        /// `--max-body-bytes`: most data bytes of all entries together.
        var maxBytes: Int
        /// `--max-payload-bytes`: largest `payload.json`.
        var maxPayloadBytes: Int
    }

    /// Reads the tar entry by entry; refuses, before unpacking anything further, absolute paths,
    /// `..`, links, devices and anything not in the seed layout (400), more than `maxEntries`
    /// entries or more than `maxBytes` of data (413, judged from each header first). Assets go
    /// to files in `folder` (in memory without one).
    static func unpack(_ reader: TarReader, limits: Limits, into folder: (any UploadFolderHandle)?) -> Result<UnpackedArchive, Problem> {
        let maxBytes = limits.maxBytes
        let maxPayload = limits.maxPayloadBytes
        let maxEntries = limits.maxEntries
        var payload: [UInt8]?
        var meta: [UInt8]?
        var assets: [AssetBudget.Candidate] = []
        var seen = Set<String>()
        var entries = 0
        var declared = 0
        while true {
            let entry: TarReader.Entry
            do {
                guard let next = try reader.next() else { break }
                entry = next
            } catch {
                return .failure(Self.malformed(error.description))
            }
            entries += 1
            guard entries <= maxEntries else {
                return .failure(Problem(status: 413, type: "too-many-entries", title: "Too many archive entries",
                                        detail: "The archive has more than \(maxEntries) entries (--max-parts). Nothing was published."))
            }
            let name: ArchivePath
            switch ArchivePath.classify(entry) {
            case .failure(let problem): return .failure(problem)
            case .success(let path): name = path
            }
            declared = Self.addingSaturating(declared, entry.size)
            guard declared <= maxBytes else { return .failure(Self.tooMuchData(maxBytes)) }
            if name == .folder { continue }
            guard seen.insert(name.text).inserted else {
                return .failure(.badRequest("invalid-archive", "Invalid archive", "The archive holds '\(name.text)' more than once. Nothing was published."))
            }
            do {
                switch name {
                case .folder: break
                case .payload:
                    guard entry.size <= maxPayload else {
                        return .failure(Problem.payloadTooLarge("payload.json has \(entry.size) bytes; the limit is \(maxPayload) (--max-payload-bytes)."))
                    }
                    payload = try readAll(reader, limit: maxBytes)
                case .meta:
                    guard entry.size <= SeedMeta.maxBytes else {
                        return .failure(.badRequest("invalid-archive", "Invalid archive", "meta.json has \(entry.size) bytes; the limit is \(SeedMeta.maxBytes)."))
                    }
                    meta = try readAll(reader, limit: maxBytes)
                case .asset(let asset):
                    assets.append(AssetBudget.Candidate(name: asset, source: try readAsset(reader, into: folder, limit: maxBytes)))
                }
            } catch is TarError where reader.dataBytes > maxBytes {
                return .failure(Self.tooMuchData(maxBytes))
            } catch let error as TarError {
                return .failure(Self.malformed(error.description))
            } catch {
                return .failure(Problem.uploadNotStored(reason: UploadStorageError(error).reason))
            }
        }
        guard let payload else {
            return .failure(.badRequest("missing-payload", "Missing payload", "The archive has no payload.json. Nothing was published."))
        }
        var schemaVersion = 1
        if let meta {
            do { schemaVersion = try SeedMeta.schemaVersion(of: meta) } catch {
                return .failure(.badRequest("invalid-archive", "Invalid archive", "meta.json: \(error.description). Nothing was published."))
            }
        }
        return .success(UnpackedArchive(payload: payload, schemaVersion: schemaVersion, assets: assets))
    }

    private static func readAll(_ reader: TarReader, limit: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try reader.readData(limit: limit) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// An asset's data, streamed to a file of the request's upload folder when it has one.
    private static func readAsset(_ reader: TarReader, into folder: (any UploadFolderHandle)?, limit: Int) throws -> AssetSource {
        guard let folder else { return .bytes(try readAll(reader, limit: limit)) }
        let file = try folder.makeFile()
        try reader.readData(limit: limit) { try file.append($0) }
        return .file(try file.finish().uploadedFile)
    }

    private static func addingSaturating(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    static func malformed(_ reason: String) -> Problem {
        .badRequest("invalid-archive", "Invalid archive", "The body is not a readable tar archive: \(reason). Nothing was published.")
    }

    static func tooMuchData(_ limit: Int) -> Problem {
        Problem(status: 413, type: "archive-too-large", title: "Archive unpacks too large",
                detail: "The archive's entries hold more than \(limit) bytes (--max-body-bytes). Nothing was published.")
    }
}

/// Where an archive entry belongs in the seed layout.
enum ArchivePath: Equatable {
    /// `./` or `assets/`: folders, skipped.
    case folder
    case payload
    case meta
    case asset(String)

    /// The path as the archive names it.
    var text: String {
        switch self {
        case .folder: return "assets/"
        case .payload: return "payload.json"
        case .meta: return "meta.json"
        case .asset(let name): return "assets/" + name
        }
    }

    /// The entry's place, or the 400 for a path or kind no seed folder holds.
    static func classify(_ entry: TarReader.Entry) -> Result<ArchivePath, Problem> {
        func refuse(_ detail: String) -> Result<ArchivePath, Problem> {
            .failure(.badRequest("invalid-archive-entry", "Invalid archive entry", detail + " Nothing was published."))
        }
        guard let raw = entry.path, !raw.isEmpty else { return refuse("An entry's path is empty or not UTF-8.") }
        let shown = String(raw.prefix(200))
        if raw.hasPrefix("/") { return refuse("Entry '\(shown)' has an absolute path.") }
        var components = raw.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if components.contains("..") { return refuse("Entry '\(shown)' climbs out of the archive with '..'.") }
        switch entry.kind {
        case .symbolicLink: return refuse("Entry '\(shown)' is a symbolic link; archives hold regular files and folders only.")
        case .hardLink: return refuse("Entry '\(shown)' is a hard link; archives hold regular files and folders only.")
        case .other: return refuse("Entry '\(shown)' is a device, FIFO or socket; archives hold regular files and folders only.")
        case .regular, .directory: break
        }
        if components.first == "." { components.removeFirst() }
        if entry.kind == .directory, components.last == "" { components.removeLast() }
        let unknown = "Entry '\(shown)' is not part of the archive layout (payload.json, meta.json, assets/<name>)."
        if entry.kind == .directory {
            return components.isEmpty || components == ["assets"] ? .success(.folder) : refuse(unknown)
        }
        switch components.count {
        case 1 where components[0] == "payload.json": return .success(.payload)
        case 1 where components[0] == "meta.json": return .success(.meta)
        case 2 where components[0] == "assets":
            if let reason = SafeName.problem(with: components[1]) {
                return refuse("Asset name '\(String(components[1].prefix(200)))' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..').")
            }
            // An archive unpacked into a seed folder must be the same scenario: names a seed
            // folder skips (hidden, `~` backups, swap files) are refused here rather than lost there.
            if SeedFolder.isEditorLeftover(components[1]) {
                return refuse("Asset name '\(components[1])' is one a seed folder skips as an editor's leftover (hidden, ending in ~, .swp or .swx).")
            }
            return .success(.asset(components[1]))
        default: return refuse(unknown)
        }
    }
}
