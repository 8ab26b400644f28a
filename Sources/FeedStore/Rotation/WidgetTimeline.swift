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

extension WidgetTimeline {
    /// One hour of a timeline in a zone with rules: when it starts, its slot, and the zone's
    /// offset then (what the device computes the slot with).
    public struct Hour: Equatable, Sendable {
        /// When the entry starts (the top of a local hour, or the moment asked for when a
        /// change of offset put that top before it), epoch milliseconds.
        public var startEpochMs: Int64
        /// The hour slot at `startEpochMs` with `zoneOffsetSeconds`.
        public var slot: Int64
        /// The zone's offset from UTC at `startEpochMs`.
        public var zoneOffsetSeconds: Int
    }

    /// `count` entries from the local hour containing `startEpochMs`, each starting at the next
    /// top of a local hour, or earlier where the zone's offset changes within the hour and the
    /// slot changes with it (Chatham's 45-minute offsets fall back at a quarter past): across a
    /// daylight-saving change a local hour repeats (the same slot twice) or is skipped, as on a
    /// device. Fewer when the hours would run past the range of epoch milliseconds an `Int64` holds.
    public static func hours(startEpochMs: Int64, count: Int, zone: ZoneRules) -> [Hour] {
        var hours: [Hour] = []
        var moment = startEpochMs
        for _ in 0..<max(0, count) {
            let offset = zone.offsetSeconds(at: floorSeconds(moment))
            let slot = WidgetRotation.hourSlot(epochMs: moment, zoneOffsetSeconds: offset)
            guard let top = WidgetRotation.slotStartEpochMs(slot: slot, zoneOffsetSeconds: offset) else { break }
            let start = hours.isEmpty ? firstStart(top: top, moment: moment, in: zone) : max(top, moment)
            hours.append(Hour(startEpochMs: start, slot: slot, zoneOffsetSeconds: offset))
            let (next, overflow) = top.addingReportingOverflow(3_600_000)
            if overflow { break }
            if let change = firstChange(in: zone, from: moment, before: next, offset: offset),
                WidgetRotation.hourSlot(epochMs: change, zoneOffsetSeconds: zone.offsetSeconds(at: change / 1000))
                    != slot
            {
                moment = change
            } else {
                moment = next
            }
        }
        return hours
    }

    /// Where the first entry starts: the top of its local hour, or the change of offset after it
    /// when the offset at the top was another (Lord Howe's clocks move half an hour at 2:00, so
    /// its 1:00 hour starts on the old offset and ends on the new).
    private static func firstStart(top: Int64, moment: Int64, in zone: ZoneRules) -> Int64 {
        let offsetAtTop = zone.offsetSeconds(at: floorSeconds(top))
        guard offsetAtTop != zone.offsetSeconds(at: floorSeconds(moment)),
            case (let after, false) = moment.addingReportingOverflow(1),
            let change = firstChange(in: zone, from: top, before: after, offset: offsetAtTop)
        else { return top }
        return change
    }

    /// The first whole second in (`from`, `before`) at which the zone's offset is no longer
    /// `offset`, in epoch milliseconds; nil when it holds throughout. Offsets change at most once
    /// within an hour, so a binary search over the seconds finds it.
    private static func firstChange(in zone: ZoneRules, from: Int64, before: Int64, offset: Int) -> Int64? {
        var low = floorSeconds(from)  // has `offset`
        var high = floorSeconds(before - 1)
        guard high > low, zone.offsetSeconds(at: high) != offset else { return nil }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if zone.offsetSeconds(at: middle) == offset { low = middle } else { high = middle }
        }
        return high * 1000
    }

    /// Whole seconds at or before `epochMs`.
    private static func floorSeconds(_ epochMs: Int64) -> Int64 {
        let (quotient, remainder) = epochMs.quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
