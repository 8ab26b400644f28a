import FeedArchive
import FeedImaging
import FeedStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The PATH of `feed-server publish` and `lint`: a seed-layout group folder, a tar in that
/// layout, or a JSON payload file, read into what a publish writes by the code each has over
/// HTTP (the seed folder's reader, the archive unpacker, the asset budget), within the same limits.
struct FeedSource {
    /// What PATH is.
    enum Kind: Equatable {
        /// A group folder: `payload.json`, optional `meta.json`, `assets/<name>`.
        case folder
        /// A tar in the seed layout.
        case archive
        /// A file of JSON text, the payload itself.
        case payload
    }

    /// The path with the links the command line named followed, as any command follows them.
    let path: String
    let kind: Kind

    /// The PATH operand, or why it names nothing to publish (a usage error).
    static func resolve(_ operand: String) throws(ServerOptions.UsageError) -> FeedSource {
        guard let resolved = realpath(operand, nil) else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be reached: \(String(cString: strerror(errno)))"
            throw ServerOptions.UsageError(description: "PATH '\(operand)' \(reason)")
        }
        let path = String(cString: resolved)
        free(resolved)
        switch PosixFileSystem().status(path)?.kind {
        case .directory: return FeedSource(path: path, kind: .folder)
        case .regular: return FeedSource(path: path, kind: isArchive(path) ? .archive : .payload)
        default:
            throw ServerOptions.UsageError(
                description: "PATH '\(operand)' is neither a folder nor a regular file (a FIFO or device is not read)")
        }
    }

    /// A tar by its name (`.tar`, `.tgz`, `.tar.gz`) or, whatever its name, by the ustar magic at
    /// byte 257 or gzip's first two bytes; JSON text starts with neither.
    static func isArchive(_ path: String) -> Bool {
        if [".tar", ".tgz", ".tar.gz"].contains(where: { path.hasSuffix($0) }) { return true }
        guard let head = try? PosixFileSystem().readPrefix(path, count: 262) else { return false }
        if head.starts(with: [0x1F, 0x8B]) { return true }
        return head.count == 262 && Array(head[257..<262]) == Array("ustar".utf8)
    }

    /// What publishing it would write (its images packed as its kind packs them by default, or
    /// as `images` says) and the schema version it names (nil: it names none).
    func upload(
        limits options: ServerOptions, images: StoreCommandOptions.Images?, encoder: VipsImageEncoder, threads: Int
    ) throws(Problem) -> (upload: AssetUpload, schemaVersion: Int?) {
        let maxPayloadBytes = options.maxPayloadBytes
        switch kind {
        case .folder:
            // A seed folder's group, packed as `--seed` packs it: the same files give the same feed.
            let seed: SeedGroup
            do {
                seed = try SeedFolder(path: path).readAsGroup(
                    maxPayloadBytes: maxPayloadBytes, maxAssets: options.transport.maxParts,
                    maxAssetBytes: options.transport.maxBodyBytes)
            } catch {
                throw Problem.unpublishableSource(error.description)
            }
            var packing = AssetUpload.Options()
            packing.raw = images == .raw
            var upload = try AssetUpload.pack(
                payload: seed.payload, candidates: seed.assets, options: packing, encoder: encoder, threads: threads)
            upload.profile = seed.profile
            return (upload, seed.schemaVersion)
        case .archive:
            // In memory, as a seed folder's assets are: bounded by --max-body-bytes, and the root
            // gets no upload folder of its own.
            let limits = ArchiveLimits(
                maxEntries: options.transport.maxParts, maxBytes: options.transport.maxBodyBytes,
                maxPayloadBytes: maxPayloadBytes)
            let (upload, schemaVersion) = try AssetUpload.unpacking(
                path: path, bytes: [], limits: limits, spool: MemoryAssetSpool(), options: AssetUpload.Options(),
                repack: images == .pack, encoder: encoder, threads: threads)
            return (upload, schemaVersion)
        case .payload:
            let fileSystem = PosixFileSystem()
            if let size = fileSystem.status(path)?.size, size > maxPayloadBytes {
                throw Problem.jsonPayloadTooLarge(bytes: size, limit: maxPayloadBytes)
            }
            let payload: [UInt8]
            do { payload = try fileSystem.readFile(path, limit: maxPayloadBytes) } catch {
                throw Problem.unpublishableSource("the file cannot be read (\(Self.reason(error)))")
            }
            return (AssetUpload(payload: payload, packing: AssetBudget.Result()), nil)
        }
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? FileSystemError else { return "\(error)" }
        return error.errno != 0 ? String(cString: strerror(error.errno)) : "\(error.kind)"
    }
}

extension Problem {
    /// 400 for a PATH of `feed-server publish` or `lint` that holds no feed: a folder that is not
    /// a seed group (no `payload.json`, a file that is no regular file, a bad `meta.json`, an
    /// asset name outside the layout), or a payload file that cannot be read.
    static func unpublishableSource(_ detail: String) -> Problem {
        .badRequest("unpublishable-source", "Nothing to publish", detail.hasSuffix(".") ? detail : detail + ".")
    }
}
