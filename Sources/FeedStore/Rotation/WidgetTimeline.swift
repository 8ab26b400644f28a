/// The entries a WidgetKit timeline would hold for a feed: one per hour, each showing the item
/// WidgetRotation picks for that hour (WidgetBridge's 24-entry timeline recipe).
public enum WidgetTimeline {
    /// One timeline entry.
    public struct Entry: Equatable, Sendable {
        /// When the entry starts (the top of a local hour), epoch milliseconds.
        public var startEpochMs: Int64
        /// Its hour slot.
        public var slot: Int64
        /// The index WidgetRotation picks.
        public var index: Int
        /// The item at that index.
        public var item: JSONValue
    }

    /// `hours` entries starting at the local hour containing `startEpochMs`; fewer when the
    /// hours would run past the range of epoch milliseconds an `Int64` holds.
    public static func entries(items: [JSONValue], startEpochMs: Int64, hours: Int, zoneOffsetSeconds: Int) -> [Entry] {
        entries(count: items.count, startEpochMs: startEpochMs, hours: hours, zoneOffsetSeconds: zoneOffsetSeconds) {
            items[$0]
        }
    }

    /// `hours` entries over `count` items, each item given by `item` (asked only for the items shown).
    public static func entries(
        count: Int, startEpochMs: Int64, hours: Int, zoneOffsetSeconds: Int, item: (Int) -> JSONValue
    ) -> [Entry] {
        guard count > 0, hours > 0 else { return [] }
        let firstSlot = WidgetRotation.hourSlot(epochMs: startEpochMs, zoneOffsetSeconds: zoneOffsetSeconds)
        var entries: [Entry] = []
        for hour in 0..<hours {
            let (slot, overflow) = firstSlot.addingReportingOverflow(Int64(hour))
            // The start of a slot in UTC: undo the zone offset applied by hourSlot.
            guard !overflow,
                let start = WidgetRotation.slotStartEpochMs(slot: slot, zoneOffsetSeconds: zoneOffsetSeconds)
            else { break }
            let index = WidgetRotation.index(slot: slot, count: count)
            entries.append(Entry(startEpochMs: start, slot: slot, index: index, item: item(index)))
        }
        return entries
    }
}
