/// How a store writes and keeps generations.
public struct FeedStoreConfiguration: Sendable {
    /// Older generations the pointer keeps listed for fallback (WidgetBridge's `keepPrevious`).
    public var keepPrevious: Int
    /// Generations are never deleted within this many milliseconds of being retired, so a client
    /// that read the feed a moment ago can still fetch its assets.
    public var gracePeriodMs: Int64
    /// Largest `feed.json` or `current.json` the reader will load.
    public var maxEnvelopeBytes: Int
    /// Bounds for payload JSON.
    public var jsonLimits: JSONLimits
    /// Retention scans `generations/` at most this often per group (a process's first publish
    /// to a group always scans, so what a crash left is cleaned up at once).
    public var sweepIntervalMs: Int64

    /// Creates a configuration; the defaults match WidgetBridge (keep 1) plus a 60 s grace period.
    public init(keepPrevious: Int = 1, gracePeriodMs: Int64 = 60_000, maxEnvelopeBytes: Int = 64 << 20,
                jsonLimits: JSONLimits = JSONLimits(), sweepIntervalMs: Int64 = 1_000) {
        self.sweepIntervalMs = max(0, sweepIntervalMs)
        self.keepPrevious = max(0, keepPrevious)
        self.gracePeriodMs = max(0, gracePeriodMs)
        self.maxEnvelopeBytes = maxEnvelopeBytes
        self.jsonLimits = jsonLimits
    }
}

/// One asset to publish: its file name and bytes.
public struct AssetInput: Sendable {
    /// The file name (must be a safe name).
    public var name: String
    /// The bytes written to `assets/<name>`.
    public var bytes: [UInt8]
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
    /// The disk refused the write; the previous feed is untouched.
    case storage(FileSystemError)
    /// The write's precondition did not hold; `servedFingerprint` is what is served now (nil: no feed).
    case preconditionFailed(servedFingerprint: String?)

    /// A readable account of the problem.
    public var description: String {
        switch self {
        case .invalidGroupName(let name, let reason): return "group name '\(name)' \(reason)"
        case .invalidAssetName(let name, let reason): return "asset name '\(name)' \(reason)"
        case .duplicateAssetName(let name): return "asset name '\(name)' appears more than once"
        case .invalidPayload(let error): return "payload is not valid JSON: \(error)"
        case .unencodablePayload(let detail): return "payload could not be encoded: \(detail)"
        case .storage(let error): return "storage failure: \(error)"
        case .preconditionFailed(let served): return "precondition failed; served fingerprint is \(served ?? "none")"
        }
    }
}
