/// One asset of a served generation.
public struct AssetInfo: Equatable, Sendable {
    /// The asset's file name (a safe name).
    public var name: String
    /// Its size in bytes.
    public var bytes: Int
    /// Pixel width, when the generation records it.
    public var width: Int?
    /// Pixel height, when the generation records it.
    public var height: Int?
    /// SHA-256 of the bytes, when the generation records it (WidgetBridge's own do not).
    public var sha256: String?

    /// Creates an asset description.
    public init(name: String, bytes: Int, width: Int? = nil, height: Int? = nil, sha256: String? = nil) {
        self.name = name
        self.bytes = bytes
        self.width = width
        self.height = height
        self.sha256 = sha256
    }

    /// The asset an envelope's list describes.
    init(stored: StoredAsset) {
        self.init(
            name: stored.name, bytes: stored.byteCount, width: stored.width, height: stored.height,
            sha256: stored.sha256)
    }

    /// `assets` in the order readers list them: by the bytes of their names.
    static func sortedByName(_ assets: [AssetInfo]) -> [AssetInfo] {
        assets.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}

/// The generation a reader returns.
public struct Generation: Equatable, Sendable {
    /// The generation id (its folder name).
    public var id: String
    /// The payload's schema version.
    public var schemaVersion: Int
    /// When it was written, epoch milliseconds.
    public var generatedAtEpochMs: Int64
    /// Its fingerprint (also the HTTP ETag).
    public var fingerprint: String
    /// The payload in canonical compact JSON.
    public var compactPayload: [UInt8]
    /// Its assets, sorted by name.
    public var assets: [AssetInfo]
}

/// Why a reader passed over a candidate generation.
public enum SkipReason: Error, Equatable, Sendable, CustomStringConvertible {
    /// The id is not a safe name (for example `..`).
    case unsafeID
    /// No `generations/<id>` folder, or no `feed.json` in it.
    case missing
    /// The folder is a symlink or not a folder.
    case notADirectory
    /// `feed.json` is not JSON.
    case unparsable(String)
    /// `feed.json` lacks a required key or has a wrong type.
    case invalidEnvelope(String)
    /// Its schema version is not the one asked for.
    case wrongSchema(found: Int, wanted: Int)
    /// An asset its envelope lists is missing or has another size (a torn write).
    case incompleteAsset(String)
    /// `feed.json` could not be read (permissions, I/O error, too large).
    case unreadable(String)

    /// A short machine-friendly token such as `wrong-schema`.
    public var code: String {
        switch self {
        case .unsafeID: return "unsafe-id"
        case .missing: return "missing"
        case .notADirectory: return "not-a-directory"
        case .unparsable: return "unparsable"
        case .invalidEnvelope: return "invalid-envelope"
        case .wrongSchema: return "wrong-schema"
        case .incompleteAsset: return "incomplete-asset"
        case .unreadable: return "unreadable"
        }
    }

    /// A readable explanation.
    public var description: String {
        switch self {
        case .unsafeID: return "id is not a safe name"
        case .missing: return "generation folder or feed.json is missing"
        case .notADirectory: return "generation is not a real folder"
        case .unparsable(let detail): return "feed.json does not parse: \(detail)"
        case .invalidEnvelope(let detail): return "feed.json is not a valid envelope: \(detail)"
        case .wrongSchema(let found, let wanted): return "schemaVersion \(found), reader wants \(wanted)"
        case .incompleteAsset(let name): return "asset \(name) is missing or truncated"
        case .unreadable(let detail): return "feed.json cannot be read: \(detail)"
        }
    }
}

/// A candidate the reader passed over, and why.
public struct SkippedCandidate: Equatable, Sendable {
    /// The candidate's id as found in the pointer or folder listing.
    public var id: String
    /// Why it was skipped.
    public var reason: SkipReason
}

/// The outcome of a read: the served generation (if any) and what was skipped before it.
public struct FeedRead: Equatable, Sendable {
    /// The generation a reader returns, nil when no candidate is readable.
    public var served: Generation?
    /// Candidates tried before `served`, in order, with reasons.
    public var skipped: [SkippedCandidate]
    /// Set when `current.json` exists but is not a usable pointer.
    public var pointerProblem: String?

    /// Whether the reader had to fall back past a broken pointer or a skipped candidate.
    public var isFallback: Bool { !skipped.isEmpty || pointerProblem != nil }
}

/// A read with its payload decoded into an app type.
public struct TypedFeed<Payload: Decodable & Sendable>: Sendable {
    /// The generation that was served.
    public var generation: Generation
    /// Its payload, decoded.
    public var payload: Payload
}
