/// WidgetBridge's rotation math, identical on Kotlin and Swift widgets (shared test vectors).
public enum WidgetRotation {
    private static let hourMs: Int64 = 3_600_000

    /// The hour slot: floor((epochMs + zoneOffsetSeconds × 1000) / 3 600 000), floor division.
    ///
    /// Defined for every input without overflow: the sum is never formed. Both terms are split
    /// into whole hours and a remainder; only the small remainders are added, and whole hours
    /// are at most about 2.6 × 10^15 each, far from `Int64`'s limits.
    public static func hourSlot(epochMs: Int64, zoneOffsetSeconds: Int) -> Int64 {
        let (epochHours, epochRest) = epochMs.quotientAndRemainder(dividingBy: hourMs)
        let (zoneHours, zoneRest) = Int64(zoneOffsetSeconds).quotientAndRemainder(dividingBy: 3600)
        let rest = epochRest + zoneRest * 1000  // |rest| < 2 × 3 600 000
        return epochHours + zoneHours + floorDivide(rest, hourMs)
    }

    /// The epoch milliseconds at which `slot` starts for a zone, or nil beyond `Int64`'s range.
    public static func slotStartEpochMs(slot: Int64, zoneOffsetSeconds: Int) -> Int64? {
        let (start, overflowA) = slot.multipliedReportingOverflow(by: hourMs)
        let (zoneMs, overflowB) = Int64(zoneOffsetSeconds).multipliedReportingOverflow(by: 1000)
        let (utc, overflowC) = start.subtractingReportingOverflow(zoneMs)
        return overflowA || overflowB || overflowC ? nil : utc
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient
    }

    /// The item index for a slot: ((slot mod count) + count) mod count; 0 when `count` is not positive.
    public static func index(slot: Int64, count: Int) -> Int {
        guard count > 0 else { return 0 }
        let size = Int64(count)
        // |slot % size| < size, so adding size cannot overflow.
        return Int(((slot % size) + size) % size)
    }

    /// FNV-1a 32-bit hash of the UTF-8 bytes (stable across platforms, unlike `hashValue`).
    public static func stableHash(_ value: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in value.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }
}
