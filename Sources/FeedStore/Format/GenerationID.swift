/// Generation ids: `<generatedAtEpochMs>-<first 8 hex chars of the fingerprint>`.
public enum GenerationID {
    /// The id for a generation written at `epochMs` with `fingerprint`.
    public static func make(epochMs: Int64, fingerprint: String) -> String {
        "\(epochMs)-\(fingerprint.prefix(8))"
    }

    /// The epoch milliseconds an id starts with, when it has that shape and fits `Int64`
    /// (ids come from disk, written by anyone: every step is overflow-checked).
    public static func epochMs(of id: String) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for byte in id.utf8 {
            if byte == UInt8(ascii: "-") { return digits > 0 ? value : nil }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = next
            digits += 1
        }
        return nil
    }

    /// The suffix of a folder holding a write in progress.
    public static let temporarySuffix = ".tmp"
}
