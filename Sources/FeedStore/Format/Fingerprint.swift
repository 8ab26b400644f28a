/// The feed fingerprint of format v1: SHA-256 over schema version, compact payload and asset lines.
public enum Fingerprint {
    /// Separates the fields of an asset line. WidgetBridge uses a single control character that
    /// the public copy of its source lost; this project defines it as U+001F (unit separator).
    public static let assetFieldSeparator: UInt8 = 0x1F

    /// One asset's contribution: name, byte count and the SHA-256 of its bytes.
    public struct AssetLine: Equatable, Sendable {
        /// The asset's file name.
        public var name: String
        /// Its size in bytes.
        public var byteCount: Int
        /// Lowercase hex SHA-256 of its bytes.
        public var sha256: String

        /// Creates an asset line from known figures.
        public init(name: String, byteCount: Int, sha256: String) {
            self.name = name
            self.byteCount = byteCount
            self.sha256 = sha256
        }

        /// Creates an asset line by hashing the asset's bytes.
        public init(name: String, bytes: [UInt8]) {
            self.init(name: name, byteCount: bytes.count, sha256: SHA256Hash.hex(bytes))
        }
    }

    /// The lowercase hex fingerprint of a generation.
    public static func compute(schemaVersion: Int, compactPayload: [UInt8], assets: [AssetLine]) -> String {
        var hasher = SHA256Hasher()
        hasher.update(Array("\(schemaVersion)\n".utf8))
        hasher.update(compactPayload)
        hasher.update([0x0A])
        // ASCII byte order: safe names are ASCII, so comparing UTF-8 bytes is exact.
        for asset in assets.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            var line = Array(asset.name.utf8)
            line.append(assetFieldSeparator)
            line.append(contentsOf: String(asset.byteCount).utf8)
            line.append(assetFieldSeparator)
            line.append(contentsOf: asset.sha256.utf8)
            line.append(0x0A)
            hasher.update(line)
        }
        return HexEncoding.lowercase(hasher.finalize())
    }
}
