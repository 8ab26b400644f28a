import Testing

@testable import FeedStore

/// A timeline's hours in a zone with daylight-saving rules, as a device counts them.
@Suite struct TimelineHoursTests {
    @Test func theNightTheClocksGoBackRepeatsALocalHour() throws {
        let berlin = try #require(ZoneRules(named: "Europe/Berlin"))
        // 2026-10-25 00:00 CEST; at 03:00 CEST (01:00 UTC) the clocks go back to 02:00 CET.
        let midnight: Int64 = 1_792_879_200_000
        let hours = WidgetTimeline.hours(startEpochMs: midnight + 1_234, count: 25, zone: berlin)
        #expect(hours.count == 25)
        #expect(hours.first?.startEpochMs == midnight)
        #expect(hours.map(\.zoneOffsetSeconds).prefix(4) == [7200, 7200, 7200, 3600])
        let slots = hours.map(\.slot)
        #expect(slots[2] == slots[3], "02:00 CEST and 02:00 CET are the same local hour")
        #expect(Set(slots).count == 24, "the 25 real hours of the day cover its 24 local hours")
        for (previous, next) in zip(hours, hours.dropFirst()) {
            #expect(next.startEpochMs - previous.startEpochMs == 3_600_000)
        }
        for hour in hours {
            #expect(
                WidgetRotation.hourSlot(epochMs: hour.startEpochMs, zoneOffsetSeconds: hour.zoneOffsetSeconds)
                    == hour.slot)
        }
    }

    @Test func theNightTheClocksGoForwardSkipsALocalHour() throws {
        let berlin = try #require(ZoneRules(named: "Europe/Berlin"))
        // 2026-03-29 00:00 CET; at 02:00 CET (01:00 UTC) the clocks go forward to 03:00 CEST.
        let midnight: Int64 = 1_774_738_800_000
        let hours = WidgetTimeline.hours(startEpochMs: midnight, count: 23, zone: berlin)
        #expect(hours.map(\.zoneOffsetSeconds).prefix(3) == [3600, 3600, 7200])
        #expect(hours[2].slot - hours[1].slot == 2, "02:00 local never happens")
        #expect(hours.last.map { $0.slot - hours[0].slot } == 23, "23 real hours reach the next local midnight")
    }

    @Test func aFixedOffsetIsTheOldTimeline() {
        let start: Int64 = 1_789_250_400_000 + 1_234_567
        let hours = WidgetTimeline.hours(startEpochMs: start, count: 24, zone: ZoneRules(fixedOffsetSeconds: 7200))
        let old = WidgetTimeline.entries(count: 3, startEpochMs: start, hours: 24, zoneOffsetSeconds: 7200) { _ in .null
        }
        #expect(hours.map(\.slot) == old.map(\.slot))
        #expect(hours.map(\.startEpochMs) == old.map(\.startEpochMs))
        let end = WidgetTimeline.hours(startEpochMs: .max - 1_000, count: 5, zone: .init(fixedOffsetSeconds: 0))
        #expect(end.count < 5, "the hours stop before they overflow")
    }

    /// At every minute of a week around a change of offset, the entry showing (the last one
    /// started) has the slot the device computes then: the change's own moment starts an entry
    /// when the slot changes with it (Chatham falls back at a quarter past its local hour).
    @Test(arguments: [
        ("Pacific/Chatham", Int64(1_775_001_600_000)), ("Pacific/Chatham", 1_790_121_600_000),
        ("Australia/Lord_Howe", 1_775_001_600_000), ("Australia/Lord_Howe", 1_790_726_400_000),
        ("Europe/Berlin", 1_774_656_000_000), ("Europe/Berlin", 1_792_800_000_000),
        ("America/St_Johns", 1_772_928_000_000), ("Asia/Kathmandu", 1_774_656_000_000),
    ])
    func everyMinuteShowsTheSlotTheDeviceComputes(zoneName: String, start: Int64) throws {
        try everyMinute(zoneName: zoneName, start: start)
    }

    /// Starting right at or after a change of offset within a local hour: the first entry starts
    /// at the change, with the offset it assumes (Lord Howe 2025-10-05 and 2026-04-05, Chatham
    /// 2027-09-26).
    @Test(arguments: [
        ("Australia/Lord_Howe", Int64(1_759_591_800_000)), ("Australia/Lord_Howe", 1_775_314_800_000),
        ("Pacific/Chatham", 1_821_880_800_000), ("Australia/Lord_Howe", 1_759_591_800_001),
    ])
    func aTimelineStartingAtAChangeOfOffsetStartsWithIt(zoneName: String, start: Int64) throws {
        try everyMinute(zoneName: zoneName, start: start)
    }

    private func everyMinute(zoneName: String, start: Int64) throws {
        let zone = try #require(ZoneRules(named: zoneName))
        let hours = WidgetTimeline.hours(startEpochMs: start, count: 200, zone: zone)
        let end = try #require(hours.last).startEpochMs
        // Each entry's offset and slot are those at its own start.
        for hour in hours {
            let offset = zone.offsetSeconds(at: Int64((Double(hour.startEpochMs) / 1000).rounded(.down)))
            #expect(hour.zoneOffsetSeconds == offset, "\(zoneName) \(hour)")
        }
        var wrong: [String] = []
        var entry = 0
        for minute in stride(from: hours[0].startEpochMs, to: end, by: 60_000) {
            while entry + 1 < hours.count, hours[entry + 1].startEpochMs <= minute { entry += 1 }
            let device = WidgetRotation.hourSlot(
                epochMs: minute, zoneOffsetSeconds: zone.offsetSeconds(at: minute / 1000))
            if device != hours[entry].slot, wrong.count < 3 {
                wrong.append("\(minute): \(hours[entry].slot) vs \(device)")
            }
        }
        #expect(wrong.isEmpty, "\(zoneName): \(wrong)")
    }
}
