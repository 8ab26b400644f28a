/// How a store writes and keeps generations.
public struct FeedStoreConfiguration: Sendable {
    /// Older generations the pointer keeps listed for fallback (WidgetBridge's `keepPrevious`).
    public var keepPrevious: Int
    /// Generations are never deleted within this many milliseconds of being retired, so a client
    /// that read the feed a moment ago can still fetch its assets.
    public var gracePeriodMs: Int64
    /// The one size limit of a generation's `feed.json`: a publish whose `feed.json` would be
    /// larger is refused, and the reader loads none larger (so what is acknowledged is readable).
    /// `current.json` is read under the same limit.
    public var maxFeedBytes: Int
    /// Deepest nesting of arrays and objects in a payload (the envelope adds one level, which
    /// the reader allows for).
    public var maxPayloadDepth: Int
    /// Retention scans `generations/` at most this often per group (a process's first publish
    /// to a group always scans, so what a crash left is cleaned up at once).
    public var sweepIntervalMs: Int64
    /// How long a check that a cached read's pointer is unchanged is trusted while this store has
    /// written nothing (`FeedStore.isCurrent`); 0 stats it on every check. Bounds how late a
    /// write by another process is seen.
    public var probeIntervalNanos: Int64
    /// Longest a publish or DELETE waits for its group's lock (another writer: a publish in
    /// progress, a fault-lab hold, another process) before it is refused with `groupLocked`, so
    /// no writer can keep a thread waiting for it.
    public var lockWaitMs: Int64 = 5_000

    /// Creates a configuration; the defaults match WidgetBridge (keep 1) plus a 60 s grace period.
    public init(
        keepPrevious: Int = 1, gracePeriodMs: Int64 = 60_000, maxFeedBytes: Int = 16 << 20,
        maxPayloadDepth: Int = 128, sweepIntervalMs: Int64 = 1_000,
        probeIntervalNanos: Int64 = FeedStore.defaultProbeIntervalNanos
    ) {
        self.sweepIntervalMs = max(0, sweepIntervalMs)
        self.probeIntervalNanos = max(0, probeIntervalNanos)
        self.keepPrevious = max(0, keepPrevious)
        self.gracePeriodMs = max(0, gracePeriodMs)
        self.maxFeedBytes = max(1, maxFeedBytes)
        self.maxPayloadDepth = max(1, maxPayloadDepth)
    }

    /// Limits for parsing a payload: no payload larger than the `feed.json` that holds it.
    public var payloadLimits: JSONLimits { JSONLimits(maxDepth: maxPayloadDepth, maxBytes: maxFeedBytes) }

    /// Limits for parsing a whole `feed.json`: one level deeper than a payload may be.
    public var envelopeLimits: JSONLimits { JSONLimits(maxDepth: maxPayloadDepth + 1, maxBytes: maxFeedBytes) }
}

/// One asset to publish: its file name and bytes.
public struct AssetInput: Sendable {
    /// The file name (must be a safe name).
    public var name: String
    /// The bytes written to `assets/<name>` (empty when they come from `file`).
    public var bytes: [UInt8]
    /// An upload file copied to `assets/<name>` as it is, never read into memory whole.
    public var file: UploadedFile?
    /// Pixel width, recorded in the envelope when known.
    public var width: Int?
    /// Pixel height, recorded in the envelope when known.
    public var height: Int?

    /// Creates an asset to publish.
    public init(name: String, bytes: [UInt8], width: Int? = nil, height: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// An asset copied from an upload file.
    public init(name: String, file: UploadedFile, width: Int? = nil, height: Int? = nil) {
        self.init(name: name, bytes: [], width: width, height: height)
        self.file = file
    }

    /// Its size in bytes.
    public var byteCount: Int { file?.byteCount ?? bytes.count }

    /// Lowercase hex SHA-256 of its bytes (a file's, computed while it was written).
    public var sha256: String { file?.sha256 ?? SHA256Hash.hex(bytes) }
}

/// What a publish did.
public enum PublishResult: Equatable, Sendable {
    /// A new generation was written and made current.
    case published(generationId: String, fingerprint: String, assetBytes: Int)
    /// The feed a reader returns already has this fingerprint; nothing was written.
    case unchanged(generationId: String, fingerprint: String)

    /// The generation that is current after the publish.
    public var generationId: String {
        switch self {
        case .published(let id, _, _), .unchanged(let id, _): return id
        }
    }

    /// The fingerprint of the current generation.
    public var fingerprint: String {
        switch self {
        case .published(_, let fingerprint, _), .unchanged(_, let fingerprint): return fingerprint
        }
    }
}

/// Why a publish was refused or failed. A refused publish has written nothing.
public enum PublishError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The group name is not a safe name.
    case invalidGroupName(String, reason: String)
    /// An asset name is not a safe name.
    case invalidAssetName(String, reason: String)
    /// Two assets have the same name.
    case duplicateAssetName(String)
    /// The payload is not acceptable JSON.
    case invalidPayload(JSONParseError)
    /// The payload could not be encoded (typed publish).
    case unencodablePayload(String)
    /// The `feed.json` this publish would write has `bytes` bytes, more than `limit` (`maxFeedBytes`).
    case feedTooLarge(bytes: Int, limit: Int)
    /// The disk refused the write. The error's path is relative to the store's root (it may be
    /// shown to clients); `outcome` says whether readers still get what they got before.
    case storage(FileSystemError, outcome: StorageOutcome)
    /// The write's precondition did not hold; `servedFingerprint` is what is served now (nil: no feed).
    case preconditionFailed(servedFingerprint: String?)
    /// Another writer kept the group's lock for the whole wait (`lockWaitMs`); nothing was written.
    case groupLocked(waitedMs: Int64)

    /// A readable account of the problem.
    public var description: String {
        switch self {
        case .invalidGroupName(let name, let reason): return "group name '\(name)' \(reason)"
        case .invalidAssetName(let name, let reason): return "asset name '\(name)' \(reason)"
        case .duplicateAssetName(let name): return "asset name '\(name)' appears more than once"
        case .invalidPayload(let error): return "payload is not valid JSON: \(error)"
        case .unencodablePayload(let detail): return "payload could not be encoded: \(detail)"
        case .feedTooLarge(let bytes, let limit): return "feed.json would have \(bytes) bytes; the limit is \(limit)"
        case .storage(let error, let outcome): return "storage failure: \(error) (\(outcome.rawValue))"
        case .preconditionFailed(let served): return "precondition failed; served fingerprint is \(served ?? "none")"
        case .groupLocked(let waited): return "another writer held the group's lock for \(waited) ms"
        }
    }
}

/// What readers see after a write that failed part-way.
public enum StorageOutcome: String, Equatable, Sendable {
    /// The failure came before the step that makes the write visible: readers get what they got before.
    case unchanged = "nothing changed"
    /// The write became visible but could not be made durable (a flush after the pointer
    /// switch failed): readers may already see it, and it may not survive a crash.
    case visibleNotDurable = "visible but not known to be durable"
}
