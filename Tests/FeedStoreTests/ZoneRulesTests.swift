import FeedStore
import Foundation
import Testing

/// Offsets from tzdata, read without ICU, agree with Foundation's time zones (which use ICU).
@Suite struct ZoneRulesTests {
    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "America/Sao_Paulo",
        "Pacific/Chatham", "Africa/Casablanca", "Europe/London", "Asia/Tokyo", "America/St_Johns", "UTC",
    ]

    /// Every hour of two years around now and of 2040 (past the files' transition tables, where the
    /// footer's POSIX rule decides), plus a sample back to 1970, for zones on both hemispheres,
    /// with half- and quarter-hour offsets.
    @Test(arguments: zones)
    func offsetsAgreeWithFoundation(_ zone: String) throws {
        let rules = try #require(ZoneRules(named: zone))
        let foundation = try #require(TimeZone(identifier: zone))
        var moments: [Int64] = []
        let now = Int64(Date().timeIntervalSince1970)
        for hour in stride(from: now - 366 * 86_400, to: now + 366 * 86_400, by: 3600) { moments.append(hour) }
        let year2040 = Int64(2_208_988_800)
        for hour in stride(from: year2040, to: year2040 + 366 * 86_400, by: 3600) { moments.append(hour) }
        for day in stride(from: Int64(0), to: now, by: 86_400 * 37) { moments.append(day) }
        var disagreements: [String] = []
        for moment in moments {
            let expected = foundation.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(moment)))
            let got = rules.offsetSeconds(at: moment)
            if expected != got, disagreements.count < 5 { disagreements.append("\(moment): \(got) vs \(expected)") }
        }
        #expect(disagreements.isEmpty, "\(zone): \(disagreements)")
    }

    /// Names that are not zones, or would leave tzdata's folder, are refused.
    @Test func onlyZoneNamesAreRead() {
        #expect(ZoneRules(named: "Europe/Berlin") != nil)
        for name in ["../etc/passwd", "Europe/../../etc/passwd", "/etc/localtime", "Nowhere/City", "", "a b"] {
            #expect(ZoneRules(named: name) == nil, "\(name)")
        }
    }

    /// Fixed offsets, as `+HH:MM`.
    @Test func fixedOffsets() {
        #expect(ZoneRules.parseOffset("+05:30") == 19_800)
        #expect(ZoneRules.parseOffset("-03:00") == -10_800)
        #expect(ZoneRules.parseOffset("+19:00") == nil)
        #expect(ZoneRules.parseOffset("0530") == nil)
        #expect(ZoneRules(fixedOffsetSeconds: -12_600).offsetSeconds(at: 0) == -12_600)
        #expect(ZoneRules(fixedOffsetSeconds: -12_600).name == "-03:30")
        #expect(ZoneRules.parseOffset("+18:00") == 64_800)
        for refused in ["+18:01", "-18:59", "+-1:00", "++1:00", "+1:000", "+05:60", "+05:30:60", "+05:30:", "+05 30"] {
            #expect(ZoneRules.parseOffset(refused) == nil, "\(refused)")
        }
    }

    /// WidgetRotation counts seconds, so a fixed offset keeps them both ways (its rotation vectors
    /// have offsets of one second).
    @Test func fixedOffsetsKeepTheirSeconds() {
        #expect(ZoneRules(fixedOffsetSeconds: -1).name == "-00:00:01")
        #expect(ZoneRules(fixedOffsetSeconds: 1799).name == "+00:29:59")
        for offset in [-1, 1, 1799, -64_799, 64_800, 20_700] {
            let name = ZoneRules(fixedOffsetSeconds: offset).name
            #expect(ZoneRules.parseOffset(name) == offset, "\(name)")
        }
    }
}
