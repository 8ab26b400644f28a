/// Generation ids: `<generatedAtEpochMs>-<first 8 hex chars of the fingerprint>`.
public enum GenerationID {
    /// The id for a generation written at `epochMs` with `fingerprint`.
    public static func make(epochMs: Int64, fingerprint: String) -> String {
        "\(epochMs)-\(fingerprint.prefix(8))"
    }

    /// The epoch milliseconds an id starts with, when it has that shape.
    public static func epochMs(of id: String) -> Int64? {
        guard let dash = id.firstIndex(of: "-") else { return nil }
        return Int64(id[..<dash])
    }

    /// The suffix of a folder holding a write in progress.
    public static let temporarySuffix = ".tmp"
}
