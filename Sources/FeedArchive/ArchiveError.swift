/// Why an archive was refused while it was unpacked, before anything was published; paths and
/// names are as the archive gives them, whole (whoever shows them shortens them).
package enum ArchiveError: Error, Equatable, Sendable {
    /// libarchive could not read the tar (its message, which names entries, never server paths).
    case malformed(reason: String)
    /// The body has no bytes at all (a client sending a file that is not there sends nothing).
    case empty
    /// An entry's path is empty or not UTF-8.
    case unreadablePath
    /// An entry's path starts with `/`.
    case absolutePath(String)
    /// An entry's path has a `..` component.
    case climbsOut(String)
    /// A symbolic link entry.
    case symbolicLink(String)
    /// A hard link entry.
    case hardLink(String)
    /// A device, FIFO or socket entry.
    case device(String)
    /// A sparse entry (a sparse map, or data that skips ahead of what is stored): its holes
    /// would unpack to bytes the body never brought.
    case sparse(String)
    /// A path with no place in the seed layout.
    case outsideLayout(String)
    /// An asset name that is not a safe name, and why.
    case unsafeAssetName(String, reason: String)
    /// A layout path (`payload.json`, `meta.json`, `assets/<name>`) held twice.
    case duplicateEntry(String)
    /// More entries than `ArchiveLimits.maxEntries`.
    case tooManyEntries(limit: Int)
    /// More data, declared or read, than `ArchiveLimits.maxBytes`.
    case tooMuchData(limit: Int)
    /// Data, declared up to and including this entry or read, past the archive's own size
    /// (`bytes` of it, the body `bodyBytes`): a tar stores every byte it unpacks to, so such
    /// headers claim data the body does not hold.
    case largerThanBody(String, bytes: Int, bodyBytes: Int)
    /// A compressed archive's data, declared or read up to and including this entry, past
    /// `ArchiveUnpacker.maxExpansion` times its compressed size (`bytes` of it, the body
    /// `bodyBytes`): a compression bomb, refused before it fills the disk.
    case expandsTooMuch(String, bytes: Int, bodyBytes: Int)
    /// `payload.json` declared larger than `ArchiveLimits.maxPayloadBytes`.
    case payloadTooLarge(bytes: Int, limit: Int)
    /// `payload.json` of `bytes` was not admitted to memory now (others hold the memory budget).
    case payloadNotAdmitted(bytes: Int)
    /// `meta.json` declared larger than `SeedMeta.maxBytes`.
    case metaTooLarge(bytes: Int, limit: Int)
    /// `meta.json` is not a `SeedMeta` (why, as `SeedMeta` says).
    case invalidMeta(reason: String)
    /// `profile.json` is too large or not a `WidgetProfile` (why, as `WidgetProfile` says).
    case invalidProfile(reason: String)
    /// No `payload.json`.
    case missingPayload
    /// An asset could not be written where the unpacker was told to (a few words, no path).
    case storageFailed(reason: String)
}
