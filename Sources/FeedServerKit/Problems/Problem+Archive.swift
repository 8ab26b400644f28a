import FeedArchive

/// The problems of `GET` and `PUT /feeds/{group}/archive`.
extension Problem {
    /// The problem for an archive the unpacker refused; nothing was published.
    init(_ error: ArchiveError) {
        switch error {
        case .malformed(let reason):
            self = .invalidArchive(
                "The body is not a readable tar archive (a tar, plain or gzip-compressed): \(reason). "
                    + "Nothing was published.")
        case .empty:
            self = .invalidArchive(
                "The archive has no bytes at all (over HTTP, an empty body: curl sends none for "
                    + "--data-binary @name when there is no such file). Nothing was published.")
        case .unreadablePath:
            self = .invalidArchiveEntry("An entry's path is empty or not UTF-8.")
        case .absolutePath(let path):
            self = .invalidArchiveEntry("Entry '\(Self.shown(path, limit: 200))' has an absolute path.")
        case .climbsOut(let path):
            self = .invalidArchiveEntry("Entry '\(Self.shown(path, limit: 200))' climbs out of the archive with '..'.")
        case .symbolicLink(let path):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' is a symbolic link; archives hold regular files and folders only."
            )
        case .hardLink(let path):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' is a hard link; archives hold regular files and folders only.")
        case .device(let path):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' is a device, FIFO or socket; "
                    + "archives hold regular files and folders only.")
        case .sparse(let path):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' is sparse: its holes would unpack to bytes the body never brought; "
                    + "archives hold regular files stored whole.")
        case .outsideLayout(let path):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' is not part of the archive layout "
                    + "(payload.json, meta.json, profile.json, assets/<name>).")
        case .unsafeAssetName(let name, let reason):
            self = .invalidArchiveEntry(
                "Asset name '\(Self.shown(name, limit: 200))' \(reason) (1 to 128 of A-Z a-z 0-9 - _ ., not '.' or '..')."
            )
        case .duplicateEntry(let path):
            self = .invalidArchive(
                "The archive holds '\(Self.shown(path, limit: 200))' more than once. Nothing was published.")
        case .tooManyEntries(let limit):
            self = Problem(
                status: 413, type: "too-many-entries", title: "Too many archive entries",
                detail: "The archive has more than \(limit) entries (--max-parts). Nothing was published.")
        case .tooMuchData(let limit):
            self = Problem(
                status: 413, type: "archive-too-large", title: "Archive unpacks too large",
                detail: "The archive's entries hold more than \(limit) bytes (--max-body-bytes). "
                    + "Nothing was published.")
        case .largerThanBody(let path, let bytes, let bodyBytes):
            // A 400, not a 413: the body is within every limit, and a tar that stores every byte
            // it unpacks to cannot claim more than it holds, so the archive is at fault, and no
            // smaller body or larger limit would make it acceptable.
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' takes the archive's data to \(bytes) bytes, more than the "
                    + "\(bodyBytes) bytes of the whole archive: its header claims data the body does not hold.")
        case .expandsTooMuch(let path, let bytes, let bodyBytes):
            self = .invalidArchiveEntry(
                "Entry '\(Self.shown(path, limit: 200))' takes the archive's data to \(bytes) bytes, more than "
                    + "\(ArchiveUnpacker.maxExpansion) times the \(bodyBytes) bytes of the compressed archive (or "
                    + "\(ArchiveUnpacker.minimumCompressedAllowance) bytes): send it uncompressed.")
        case .payloadTooLarge(let bytes, let limit):
            self = .payloadTooLarge("payload.json has \(bytes) bytes; the limit is \(limit) (--max-payload-bytes).")
        case .payloadNotAdmitted(let bytes):
            self = .busy(
                "Other requests in progress hold the server's memory for request bodies (--max-memory-body-bytes): "
                    + "this archive's payload.json of \(bytes) bytes does not fit beside them; try again in a moment.",
                retryAfterSeconds: 2)
        case .metaTooLarge(let bytes, let limit):
            self = .invalidArchive("meta.json has \(bytes) bytes; the limit is \(limit).")
        case .invalidMeta(let reason):
            self = .invalidArchive("meta.json: \(reason). Nothing was published.")
        case .invalidProfile(let reason):
            self = .invalidArchive("profile.json: \(reason)\(reason.hasSuffix(".") ? "" : ".") Nothing was published.")
        case .missingPayload:
            self = .badRequest(
                "missing-payload", "Missing payload", "The archive has no payload.json. Nothing was published.")
        case .storageFailed(let reason):
            self = .uploadNotStored(reason: reason)
        }
    }

    /// 400 for an archive that cannot be read, or whose entries together are not a group.
    static func invalidArchive(_ detail: String) -> Problem {
        .badRequest("invalid-archive", "Invalid archive", detail)
    }

    /// 400 for an entry no seed folder could hold.
    static func invalidArchiveEntry(_ detail: String) -> Problem {
        .badRequest("invalid-archive-entry", "Invalid archive entry", detail + " Nothing was published.")
    }

    /// 415 for a restore whose body is not sent as a tar.
    static func unsupportedArchiveMediaType(_ sent: String?) -> Problem {
        Problem(
            status: 415, type: "unsupported-media-type", title: "Unsupported media type",
            detail: "Send the archive as application/x-tar (a tar in the layout GET /feeds/{group}/archive "
                + "returns, or the same gzip-compressed; application/gzip also works) "
                + "(got \(sent ?? "no Content-Type")).",
            headers: [("Accept-Put", "application/x-tar, application/gzip")])
    }

    /// 404 for an export of a group with nothing to read.
    static func nothingToExport(group: String) -> Problem {
        .notFound("Group '\(group)' has no readable generation to export.")
    }

    /// 503 for an export that failed part-way, most likely because the generation was retired
    /// and removed while it was read: the next try gets the new one.
    static func exportFailed(generation: String, group: String, reason: String) -> Problem {
        Problem(
            status: 503, type: "export-failed", title: "Export failed",
            detail: "Generation \(generation) of group '\(group)' could not be archived (\(reason)); try again.",
            headers: [("Retry-After", "1")])
    }

    /// A path or name from an archive, cut to a length a detail can carry.
}
