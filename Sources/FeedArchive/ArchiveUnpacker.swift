import FeedStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// From `profile.json`; nil without one.
    package var profile: WidgetProfile?
}

/// Unpacks a tar in the seed layout (`SeedLayout`), refusing the whole archive at its first
/// fault, before anything further is read.
package enum ArchiveUnpacker {
    /// A reader over the uploaded file at `path`, or over `bytes` without one.
    package static func reader(path: String?, bytes: [UInt8]) throws(ArchiveError) -> TarReader {
        // libarchive calls no bytes an unrecognized format; the client's mistake is elsewhere.
        if isEmpty(path: path, bytes: bytes) { throw .empty }
        do {
            return try path.map { try TarReader(path: $0) } ?? TarReader(bytes: bytes)
        } catch {
            throw .malformed(reason: "\(error)")
        }
    }

    /// Whether the body (the file at `path`, or `bytes` without one) has no bytes.
    private static func isEmpty(path: String?, bytes: [UInt8]) -> Bool {
        guard let path else { return bytes.isEmpty }
        var status = stat()
        return lstat(path, &status) == 0 && status.st_size == 0
    }

    /// Reads the tar entry by entry. Absolute paths, `..`, links, devices, sparse entries and
    /// anything outside the layout are refused (editors' leftovers skipped), and so are more than
    /// `maxEntries` entries, more than `maxBytes` of unpacked data, or, for an uncompressed tar,
    /// more data than the archive's own size, judged from each header before its data is read
    /// (and again as it is read). The last bound is what keeps the bytes written to what the body
    /// brought: the body and in-flight limits count only bytes on the wire. Assets go to files
    /// of `spool`. `admitPayload` is asked, with its size, before `payload.json` is read into memory.
    package static func unpack(
        _ reader: TarReader, limits: ArchiveLimits, assets spool: any AssetSpool,
        admitPayload: (Int) -> Bool = { _ in true }
    )
        throws(ArchiveError) -> UnpackedArchive
    {
        var payload: [UInt8]?
        var meta: [UInt8]?
        var profile: [UInt8]?
        var assets: [AssetBudget.Candidate] = []
        var seen = Set<String>()
        var entries = 0
        var declared = 0
        // A compressed tar may honestly hold more than its body, within `maxExpansion` of it.
        let bounds = DataBounds(
            limit: limits.maxBytes,
            archiveBytes: reader.isCompressed ? compressedAllowance(reader.archiveBytes) : reader.archiveBytes,
            compressed: reader.isCompressed, bodyBytes: reader.archiveBytes)
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
            guard declared <= bounds.archiveBytes else {
                // `place(of:)` refused an entry without a path.
                throw bounds.refusal(entry.path ?? "", reached: declared)
            }
            let key: String
            switch place {
            // Editors' leftovers are skipped, as a seed folder skips them (their data is never read).
            case .folder, .skipped: continue
            case .payload: key = SeedLayout.payloadFile
            case .meta: key = SeedLayout.metaFile
            case .profile: key = SeedLayout.profileFile
            case .asset(let name): key = SeedLayout.assetsFolder + "/" + name
            }
            guard seen.insert(key).inserted else { throw .duplicateEntry(key) }
            switch place {
            case .folder, .skipped: break
            case .payload:
                guard entry.size <= limits.maxPayloadBytes else {
                    throw .payloadTooLarge(bytes: entry.size, limit: limits.maxPayloadBytes)
                }
                guard admitPayload(entry.size) else { throw .payloadNotAdmitted(bytes: entry.size) }
                payload = try readAll(reader, entry: key, bounds)
            case .meta:
                guard entry.size <= SeedMeta.maxBytes else {
                    throw .metaTooLarge(bytes: entry.size, limit: SeedMeta.maxBytes)
                }
                meta = try readAll(reader, entry: key, bounds)
            case .profile:
                guard entry.size <= WidgetProfile.maxBytes else {
                    throw .invalidProfile(reason: "it has \(entry.size) bytes; the limit is \(WidgetProfile.maxBytes)")
                }
                profile = try readAll(reader, entry: key, bounds)
            case .asset(let name):
                let source = try readAsset(reader, entry: key, bounds, into: spool)
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
        var stated: WidgetProfile?
        if let profile {
            do { stated = try WidgetProfile(json: profile) } catch { throw .invalidProfile(reason: error.detail) }
        }
        return UnpackedArchive(payload: payload, schemaVersion: schemaVersion, assets: assets, profile: stated)
    }

    /// The entry's place in the layout, or why it has none; the entry's own faults (path, kind)
    /// are judged first, so a link is refused as a link whatever its name.
    private static func place(of entry: TarReader.Entry) throws(ArchiveError) -> SeedLayout.Place {
        guard let path = entry.path, !path.isEmpty else { throw .unreadablePath }
        if path.hasPrefix("/") { throw .absolutePath(path) }
        if path.split(separator: "/", omittingEmptySubsequences: false).contains("..") { throw .climbsOut(path) }
        // Never extracted or read, so what it is does not matter (a `.venv/bin/python` link).
        if SeedLayout.isLeftover(path) { return .skipped }
        switch entry.kind {
        case .symbolicLink: throw .symbolicLink(path)
        case .hardLink: throw .hardLink(path)
        case .other: throw .device(path)
        case .regular, .directory: break
        }
        if entry.isSparse { throw .sparse(path) }
        do {
            return try SeedLayout.classify(path, isFolder: entry.kind == .directory)
        } catch {
            switch error {
            case .outsideLayout: throw .outsideLayout(path)
            case .unsafeAssetName(let name, let reason): throw .unsafeAssetName(name, reason: reason)
            }
        }
    }

    /// How many times its compressed size a compressed archive may unpack to (JSON and text
    /// compress well; photos hardly at all), and the allowance every compressed archive has
    /// whatever its size.
    package static let maxExpansion = 64
    package static let minimumCompressedAllowance = 16 << 20

    private static func compressedAllowance(_ bodyBytes: Int) -> Int {
        max(
            minimumCompressedAllowance,
            bodyBytes.multipliedReportingOverflow(by: maxExpansion).overflow ? .max : bodyBytes * maxExpansion)
    }

    /// The most data bytes an archive may unpack to: `--max-body-bytes`, and never more than
    /// the archive itself holds (compressed: `compressedAllowance` of it).
    private struct DataBounds {
        let limit: Int
        let archiveBytes: Int
        let compressed: Bool
        let bodyBytes: Int

        var bytes: Int { min(limit, archiveBytes) }

        /// The refusal for `reached` bytes of data, read while unpacking `entry`.
        func refusal(_ entry: String, reached: Int) -> ArchiveError {
            guard archiveBytes <= limit else { return .tooMuchData(limit: limit) }
            return compressed
                ? .expandsTooMuch(entry, bytes: reached, bodyBytes: bodyBytes)
                : .largerThanBody(entry, bytes: reached, bodyBytes: archiveBytes)
        }
    }

    private static func readAll(
        _ reader: TarReader, entry: String, _ bounds: DataBounds
    ) throws(ArchiveError)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        try read(reader, entry: entry, bounds) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// An asset's data, streamed to a new file of `spool`.
    private static func readAsset(
        _ reader: TarReader, entry: String, _ bounds: DataBounds, into spool: any AssetSpool
    ) throws(ArchiveError)
        -> AssetSource
    {
        let file: any AssetSpoolFile
        do { file = try spool.makeFile() } catch { throw .storageFailed(reason: error.reason) }
        try read(reader, entry: entry, bounds) { piece throws(AssetSpoolError) in try file.append(piece) }
        do { return try file.finish() } catch { throw .storageFailed(reason: error.reason) }
    }

    /// Passes the entry's data to `piece`, its failure as an archive error: libarchive's or a
    /// hole's (the tar is at fault), a bound's, or the spool's (the server is).
    private static func read(
        _ reader: TarReader, entry: String, _ bounds: DataBounds, _ piece: (UnsafeRawBufferPointer) throws -> Void
    ) throws(ArchiveError) {
        do {
            try reader.readData(limit: bounds.bytes, piece)
        } catch {
            switch error {
            case .unreadable(let failure): throw .malformed(reason: failure.description)
            case .hole: throw .sparse(entry)
            case .overLimit(let reached): throw bounds.refusal(entry, reached: reached)
            case .output(let failure as AssetSpoolError): throw .storageFailed(reason: failure.reason)
            // Nothing else throws here; its description might name a path, so it is not shown.
            case .output: throw .storageFailed(reason: "other")
            }
        }
    }

    private static func addingSaturating(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
