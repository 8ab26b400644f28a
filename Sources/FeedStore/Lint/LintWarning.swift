/// What a publish can be warned about (the `code` of a warning).
public enum LintCode: String, CaseIterable, Sendable, Equatable {
    /// An image above WidgetKit's largest area.
    case iosImageArea = "ios-image-area"
    /// The generation's decoded images above the iOS widget extension's memory ceiling.
    case iosExtensionMemory = "ios-extension-memory"
    /// The generation's decoded images above Android's RemoteViews bitmap budget.
    case androidBitmapMemory = "android-bitmap-memory"
    /// A payload string names an image file the generation does not have.
    case assetNotFound = "asset-not-found"
    /// An asset no payload string names.
    case assetUnreferenced = "asset-unreferenced"
    /// The profile's items pointer names no array in the payload.
    case itemsNotFound = "items-not-found"
    /// An item's image (by the profile) is not an asset of the generation.
    case itemImageMissing = "item-image-missing"
    /// An item has no title where the profile says.
    case itemTitleMissing = "item-title-missing"
    /// An asset no item's image is and no payload string names (with a stated image rule).
    case assetUnused = "asset-unused"
    /// The profile's empty-state text is not in the payload.
    case emptyStateMissing = "empty-state-missing"
    /// The group's stored `profile.json` cannot be read: its checks fell back to a guess.
    case profileUnreadable = "profile-unreadable"
    /// The publish changes the feed's bytes but nothing its profile shows: a reload for nothing.
    case invisibleChange = "invisible-change"
}

/// One problem a device would have with a feed, found on the server before it gets there.
public struct LintWarning: Equatable, Sendable {
    /// What kind of problem.
    public var code: LintCode
    /// A sentence saying what is wrong, with the figures, and what the device will do.
    public var detail: String
    /// The asset concerned (for `asset-not-found`: the file name the payload gives).
    public var asset: String?
    /// The limit broken, in the unit of `actual` (pixels or bytes).
    public var limit: Int?
    /// The figure that broke it.
    public var actual: Int?
    /// Where in the payload (RFC 6901 JSON Pointer) the string naming the file is.
    public var pointer: String?

    /// Creates a warning.
    public init(
        code: LintCode, detail: String, asset: String? = nil, limit: Int? = nil, actual: Int? = nil,
        pointer: String? = nil
    ) {
        self.code = code
        self.detail = detail
        self.asset = asset
        self.limit = limit
        self.actual = actual
        self.pointer = pointer
    }
}

/// A generation's warnings: the first `limit` spelled out, every one counted by code.
public struct LintReport: Equatable, Sendable {
    /// The warnings spelled out, at most `limit`, in the order they were found.
    public private(set) var warnings: [LintWarning] = []
    /// How many warnings of each code were found, spelled out or not.
    public private(set) var counts: [LintCode: Int] = [:]
    /// How many warnings may be spelled out.
    public let limit: Int
    /// The widget profile the items were checked with, stated or inferred; nil when none.
    public var profile: LintProfile?

    /// An empty report that spells out at most `limit` warnings.
    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Every warning found.
    public var total: Int { counts.values.reduce(0, +) }
    /// Warnings counted but not spelled out.
    public var omitted: Int { total - warnings.count }
    /// Whether nothing was found.
    public var isEmpty: Bool { counts.isEmpty }

    /// Counts a warning of `code`; builds it only while fewer than `limit` are spelled out.
    public mutating func add(_ code: LintCode, _ make: () -> LintWarning) {
        counts[code, default: 0] += 1
        if warnings.count < limit { warnings.append(make()) }
    }
}
