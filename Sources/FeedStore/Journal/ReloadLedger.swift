/// What the operating systems would have done with a group's publishes, from the journal: a
/// model of WidgetKit's reload budget (each publish that changes the feed asks for a reload;
/// iOS grants a budget of them in any rolling 24 hours, a reload past it is dropped and the widget
/// keeps what it showed) and of Android (an app's own `updateAppWidget` is not throttled; only
/// `updatePeriodMillis` has a 30-minute floor, which publishes do not use).
public struct ReloadLedger: Sendable {
    /// What iOS did with a publish's reload.
    public enum IOSOutcome: String, Sendable {
        case reloaded
        case overBudget = "over-budget"
    }

    /// One publish that changed the feed.
    public struct Publish: Sendable, Equatable {
        public var at: Int64
        public var generationId: String?
        public var ios: IOSOutcome
        /// Whether it changed what the widget shows (false: `invisible-change`).
        public var visible: Bool
    }

    /// From when to when a widget on iOS showed an older generation than the served one.
    public struct StaleSpan: Sendable, Equatable {
        public var from: Int64
        public var to: Int64
        /// The generation the widget still showed.
        public var showing: String?
        /// The newest published generation it did not show.
        public var missed: String?
    }

    /// The publishes from `since` on, oldest first.
    public private(set) var publishes: [Publish] = []
    /// The stale spans that overlap `since…now`, cut to it.
    public private(set) var staleSpans: [StaleSpan] = []
    /// Reloads granted in the 24 hours before `now`.
    public private(set) var reloadsInWindow = 0

    /// WidgetKit's budget as modelled: Apple says a frequently viewed widget "typically" gets
    /// 40 to 70 reloads a day; the low end is the safe figure.
    public static let defaultIOSBudget = 40
    /// The budget's rolling window.
    public static let windowMs: Int64 = 86_400_000

    /// The ledger of `group` from `entries` (any order), with `budget` reloads per rolling window,
    /// reporting from `since` to `now`. Every publish of the journal counts toward the budget,
    /// also those before `since`.
    public init(entries: [JournalEntry], group: String, budget: Int, since: Int64, now: Int64) {
        let asks = entries.filter { entry in
            entry.group == group && entry.result == "published"
                && [.publish, .restore, .seed].contains(entry.kind)
        }.sorted { $0.at < $1.at }
        var granted: [Int64] = []
        var windowStart = 0  // the first of `granted` still inside the window of the publish at hand
        var shown: String?
        var staleSince: Int64?
        var missed: String?
        for entry in asks {
            // Reloads still inside the window that ends at this publish (publishes come in order,
            // so the window's start only moves forward: one pass, whatever the budget).
            while windowStart < granted.count, entry.at - granted[windowStart] >= Self.windowMs { windowStart += 1 }
            let recent = granted.count - windowStart
            let outcome: IOSOutcome = recent < budget ? .reloaded : .overBudget
            if outcome == .reloaded {
                granted.append(entry.at)
                if let from = staleSince {
                    addSpan(from: from, to: entry.at, showing: shown, missed: missed, since: since)
                }
                staleSince = nil
                shown = entry.generationId
            } else {
                staleSince = staleSince ?? entry.at
                missed = entry.generationId
            }
            if entry.at >= since {
                publishes.append(
                    Publish(
                        at: entry.at, generationId: entry.generationId, ios: outcome, visible: entry.visible ?? true))
            }
        }
        if let from = staleSince { addSpan(from: from, to: now, showing: shown, missed: missed, since: since) }
        reloadsInWindow = granted.reversed().prefix { now - $0 < Self.windowMs }.count
    }

    private mutating func addSpan(from: Int64, to: Int64, showing: String?, missed: String?, since: Int64) {
        guard to > since else { return }
        staleSpans.append(StaleSpan(from: max(from, since), to: to, showing: showing, missed: missed))
    }
}
