/// The broken states the fault lab can write, each the way a real failure leaves it on disk.
public enum FaultKind: String, CaseIterable, Sendable, Equatable {
    /// A new current generation whose `feed.json` is cut mid-way.
    case corruptFeed = "corrupt-feed"
    /// A new current generation whose `schemaVersion` is one more than the served one.
    case wrongSchema = "wrong-schema"
    /// `current.json` names a generation that does not exist.
    case danglingPointer = "dangling-pointer"
    /// `current.json` is not JSON.
    case corruptPointer = "corrupt-pointer"
    /// A leftover `<id>.tmp` generation folder.
    case staleTmp = "stale-tmp"
    /// A new current generation with one asset file gone.
    case missingAsset = "missing-asset"
    /// A new current generation with one asset file cut short.
    case truncatedAsset = "truncated-asset"
    /// A renamed generation folder whose files are all empty.
    case tornGeneration = "torn-generation"
    /// A publish that holds its `.tmp` folder for some seconds before the rename.
    case slowPublish = "slow-publish"

    /// Whether it writes a copy of the served generation (and so needs a group that has one).
    var copiesServedGeneration: Bool {
        switch self {
        case .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration, .slowPublish: return true
        case .danglingPointer, .corruptPointer, .staleTmp: return false
        }
    }

    /// Longest hold of a `slow-publish`, in seconds.
    public static let maxHoldSeconds = 60

    /// What it writes, and which real failure leaves the same thing on disk.
    public var summary: String {
        switch self {
        case .corruptFeed:
            return
                "a new current generation whose feed.json is cut in half, as a writer that does not flush it leaves "
                + "it after a crash"
        case .wrongSchema:
            return "a new current generation with schemaVersion one above the group's, as a newer app version writes it"
        case .danglingPointer:
            return
                "current.json naming a generation that is not on disk, as a power cut leaves it when only the "
                + "pointer was flushed"
        case .corruptPointer:
            return "current.json cut in half (not JSON), as a writer that replaces it in place leaves it after a crash"
        case .staleTmp:
            return
                "a leftover .tmp generation folder with its feed.json cut, as a publish that crashed mid-write "
                + "leaves it"
        case .missingAsset:
            return
                "a new current generation with one asset file gone, as an unflushed writer or a cache cleaner leaves it"
        case .truncatedAsset:
            return
                "a new current generation with one asset file cut in half, as an unflushed writer leaves it after a "
                + "power cut"
        case .tornGeneration:
            return
                "a new current generation whose files are all empty, as a writer that flushes only current.json "
                + "leaves it after a power cut"
        case .slowPublish:
            return "a publish that holds its complete .tmp folder before the rename, to watch readers during a write"
        }
    }
}
