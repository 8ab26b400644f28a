import FeedStore

/// The bounds an archive is read within.
package struct ArchiveLimits: Sendable {
    /// Most entries (`--max-parts` in the server).
    package var maxEntries: Int
    /// Most data bytes of all entries together (`--max-body-bytes`).
    package var maxBytes: Int
    /// Largest `payload.json` (`--max-payload-bytes`).
    package var maxPayloadBytes: Int

    /// Bounds of these sizes.
    package init(maxEntries: Int, maxBytes: Int, maxPayloadBytes: Int) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.maxPayloadBytes = maxPayloadBytes
    }
}

/// What an archive held, ready to pack and publish.
package struct UnpackedArchive {
    /// The bytes of `payload.json` as found.
    package var payload: [UInt8]
    /// From `meta.json`, 1 without one.
    package var schemaVersion: Int
    /// The files of `assets/`, in archive order.
    package var assets: [AssetBudget.Candidate]
}

/// Unpacks a tar in the seed layout (`SeedLayout`), refusing the whole archive at its first
/// fault, before anything further is read.
package enum ArchiveUnpacker {
    /// A reader over the uploaded file at `path`, or over `bytes` without one.
    package static func reader(path: String?, bytes: [UInt8]) throws(ArchiveError) -> TarReader {
        do {
            return try path.map { try TarReader(path: $0) } ?? TarReader(bytes: bytes)
        } catch {
            throw .malformed(reason: "\(error)")
        }
    }

    /// Reads the tar entry by entry. Absolute paths, `..`, links, devices and anything outside
    /// the layout are refused, and so are more than `maxEntries` entries or more than `maxBytes`
    /// of data, judged from each header before its data is read (and again as it is read).
    /// Assets go to files of `spool`.
    package static func unpack(
        _ reader: TarReader, limits: ArchiveLimits, assets spool: any AssetSpool
    )
        throws(ArchiveError) -> UnpackedArchive
    {
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
                throw .malformed(reason: error.description)
            }
            entries += 1
            guard entries <= limits.maxEntries else { throw .tooManyEntries(limit: limits.maxEntries) }
            let place = try place(of: entry)
            declared = addingSaturating(declared, entry.size)
            guard declared <= limits.maxBytes else { throw .tooMuchData(limit: limits.maxBytes) }
            let key: String
            switch place {
            // `.skipped` is a seed folder's; an archive's leftovers were refused above.
            case .folder, .skipped: continue
            case .payload: key = SeedLayout.payloadFile
            case .meta: key = SeedLayout.metaFile
            case .asset(let name): key = SeedLayout.assetsFolder + "/" + name
            }
            guard seen.insert(key).inserted else { throw .duplicateEntry(key) }
            switch place {
            case .folder, .skipped: break
            case .payload:
                guard entry.size <= limits.maxPayloadBytes else {
                    throw .payloadTooLarge(bytes: entry.size, limit: limits.maxPayloadBytes)
                }
                payload = try readAll(reader, limit: limits.maxBytes)
            case .meta:
                guard entry.size <= SeedMeta.maxBytes else {
                    throw .metaTooLarge(bytes: entry.size, limit: SeedMeta.maxBytes)
                }
                meta = try readAll(reader, limit: limits.maxBytes)
            case .asset(let name):
                let source = try readAsset(reader, into: spool, limit: limits.maxBytes)
                assets.append(AssetBudget.Candidate(name: name, source: source))
            }
        }
        guard let payload else { throw .missingPayload }
        var schemaVersion = 1
        if let meta {
            do { schemaVersion = try SeedMeta.schemaVersion(of: meta) } catch {
                throw .invalidMeta(reason: error.description)
            }
        }
        return UnpackedArchive(payload: payload, schemaVersion: schemaVersion, assets: assets)
    }

    /// The entry's place in the layout, or why it has none; the entry's own faults (path, kind)
    /// are judged first, so a link is refused as a link whatever its name.
    private static func place(of entry: TarReader.Entry) throws(ArchiveError) -> SeedLayout.Place {
        guard let path = entry.path, !path.isEmpty else { throw .unreadablePath }
        if path.hasPrefix("/") { throw .absolutePath(path) }
        if path.split(separator: "/", omittingEmptySubsequences: false).contains("..") { throw .climbsOut(path) }
        switch entry.kind {
        case .symbolicLink: throw .symbolicLink(path)
        case .hardLink: throw .hardLink(path)
        case .other: throw .device(path)
        case .regular, .directory: break
        }
        do {
            return try SeedLayout.classify(path, isFolder: entry.kind == .directory, for: .archive)
        } catch {
            switch error {
            case .outsideLayout: throw .outsideLayout(path)
            case .unsafeAssetName(let name, let reason): throw .unsafeAssetName(name, reason: reason)
            case .editorLeftover(let name): throw .editorLeftover(name)
            }
        }
    }

    private static func readAll(_ reader: TarReader, limit: Int) throws(ArchiveError) -> [UInt8] {
        var bytes: [UInt8] = []
        try reading(reader, limit: limit) { try reader.readData(limit: limit) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    /// An asset's data, streamed to a new file of `spool`.
    private static func readAsset(
        _ reader: TarReader, into spool: any AssetSpool, limit: Int
    ) throws(ArchiveError)
        -> AssetSource
    {
        try reading(reader, limit: limit) {
            let file = try spool.makeFile()
            try reader.readData(limit: limit) { try file.append($0) }
            return try file.finish()
        }
    }

    /// `body`'s result, its failure as an archive error: libarchive's (the tar is at fault) or
    /// the spool's (the server is).
    private static func reading<T>(_ reader: TarReader, limit: Int, _ body: () throws -> T) throws(ArchiveError) -> T {
        do {
            return try body()
        } catch is TarError where reader.dataBytes > limit {
            throw .tooMuchData(limit: limit)
        } catch let error as TarError {
            throw .malformed(reason: error.description)
        } catch let error as AssetSpoolError {
            throw .storageFailed(reason: error.reason)
        } catch {
            // Nothing else throws here; its description might name a path, so it is not shown.
            throw .storageFailed(reason: "other")
        }
    }

    private static func addingSaturating(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
