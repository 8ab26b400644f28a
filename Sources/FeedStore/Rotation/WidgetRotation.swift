/// WidgetBridge's rotation math, identical on Kotlin and Swift widgets (shared test vectors).
public enum WidgetRotation {
    private static let hourMs: Int64 = 3_600_000

    /// The hour slot: floor((epochMs + zoneOffsetSeconds × 1000) / 3 600 000), floor division.
    public static func hourSlot(epochMs: Int64, zoneOffsetSeconds: Int) -> Int64 {
        let local = epochMs + Int64(zoneOffsetSeconds) * 1000
        let quotient = local / hourMs
        return (local % hourMs != 0 && local < 0) ? quotient - 1 : quotient
    }

    /// The item index for a slot: ((slot mod count) + count) mod count; `count` must be positive.
    public static func index(slot: Int64, count: Int) -> Int {
        precondition(count > 0, "count must be positive")
        let size = Int64(count)
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
