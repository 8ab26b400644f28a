/// What a `feed.json` says besides its payload: enough to list a generation without keeping it.
public struct EnvelopeSummary: Equatable, Sendable {
    /// The app's payload version.
    public var schemaVersion: Int
    /// When the generation was written, epoch milliseconds.
    public var generatedAtEpochMs: Int64
    /// The generation's fingerprint as recorded by its writer.
    public var fingerprint: String
    /// This project's asset list (nil in WidgetBridge's own files).
    public var assets: [StoredAsset]?
}

/// The contents of `generations/<id>/feed.json`.
public struct Envelope: Equatable, Sendable {
    /// The app's payload version.
    public var schemaVersion: Int
    /// When the generation was written, epoch milliseconds.
    public var generatedAtEpochMs: Int64
    /// The generation's fingerprint as recorded by its writer.
    public var fingerprint: String
    /// The payload in canonical compact form.
    public var compactPayload: [UInt8]
    /// The asset list this project adds (`{name, bytes, sha256, width, height}`); nil in WidgetBridge's own files.
    public var assets: [StoredAsset]?

    /// Creates an envelope.
    public init(
        schemaVersion: Int, generatedAtEpochMs: Int64, fingerprint: String, compactPayload: [UInt8],
        assets: [StoredAsset]?
    ) {
        self.schemaVersion = schemaVersion
        self.generatedAtEpochMs = generatedAtEpochMs
        self.fingerprint = fingerprint
        self.compactPayload = compactPayload
        self.assets = assets
    }

    /// Everything but the payload.
    public var summary: EnvelopeSummary {
        EnvelopeSummary(
            schemaVersion: schemaVersion, generatedAtEpochMs: generatedAtEpochMs, fingerprint: fingerprint,
            assets: assets)
    }

    /// Why a `feed.json` could not be used.
    public enum DecodeError: Error, Equatable, Sendable {
        /// Not JSON at all.
        case unparsable(JSONParseError)
        /// JSON, but a required key is missing or has the wrong type.
        case invalid(String)
    }

    /// Decodes `feed.json` bytes in any valid JSON formatting; unknown keys are ignored.
    public static func decode(
        _ bytes: [UInt8], limits: JSONLimits = JSONLimits(maxDepth: 129)
    ) throws(DecodeError) -> Envelope {
        let document: JSONDocument
        do { document = try JSONDocument.parse(bytes, limits: limits) } catch { throw .unparsable(error) }
        let root = document.root
        guard root.kind == .object else { throw .invalid("feed.json is not a JSON object") }
        guard let schema = root["schemaVersion"]?.integerValue, let schemaVersion = Int(exactly: schema) else {
            throw .invalid("schemaVersion is missing or not an integer")
        }
        guard let generatedAt = root["generatedAtEpochMs"]?.integerValue else {
            throw .invalid("generatedAtEpochMs is missing or not an integer")
        }
        guard let fingerprint = root["fingerprint"]?.stringValue else {
            throw .invalid("fingerprint is missing or not a string")
        }
        guard let payload = root["payload"] else { throw .invalid("payload is missing") }
        return Envelope(
            schemaVersion: schemaVersion,
            generatedAtEpochMs: generatedAt,
            fingerprint: fingerprint,
            compactPayload: Array(payload.compactBytes),
            assets: decodeAssets(root["assets"])
        )
    }

    /// This project's `assets` list, or nil when the key is absent or has any other shape: WidgetBridge's
    /// readers ignore unknown keys, so another writer's `assets` must not make a generation unreadable
    /// here (the reader then lists the `assets/` folder, as for WidgetBridge's own generations).
    private static func decodeAssets(_ value: JSONNode?) -> [StoredAsset]? {
        guard let value, value.kind == .array else { return nil }
        let elements = value.elements
        var lines: [StoredAsset] = []
        for element in elements {
            guard let name = element["name"]?.stringValue,
                let bytes = element["bytes"]?.integerValue, let count = Int(exactly: bytes), count >= 0,
                let sha256 = element["sha256"]?.stringValue, SHA256Hash.isHex(sha256)
            else {
                return nil
            }
            let width = element["width"]?.integerValue.flatMap { Int(exactly: $0) }
            let height = element["height"]?.integerValue.flatMap { Int(exactly: $0) }
            lines.append(StoredAsset(name: name, byteCount: count, sha256: sha256, width: width, height: height))
        }
        return lines
    }

    /// The compact `feed.json` bytes this project writes (WidgetBridge's readers accept any formatting).
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        // Sized once: appending a large payload and then the closing bytes to a growing array
        // would copy the payload into a buffer twice its size.
        output.reserveCapacity(compactPayload.count + 256 + (assets?.count ?? 0) * 400)
        output.append(
            contentsOf:
                "{\"schemaVersion\":\(schemaVersion),\"generatedAtEpochMs\":\(generatedAtEpochMs),\"fingerprint\":".utf8
        )
        CompactJSON.writeString(fingerprint, to: &output)
        output.append(contentsOf: ",\"payload\":".utf8)
        output.append(contentsOf: compactPayload)
        if let assets {
            output.append(contentsOf: ",\"assets\":[".utf8)
            for (index, asset) in assets.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: "{\"name\":".utf8)
                CompactJSON.writeString(asset.name, to: &output)
                output.append(contentsOf: ",\"bytes\":\(asset.byteCount),\"sha256\":".utf8)
                CompactJSON.writeString(asset.sha256, to: &output)
                if let width = asset.width, let height = asset.height {
                    output.append(contentsOf: ",\"width\":\(width),\"height\":\(height)".utf8)
                }
                output.append(UInt8(ascii: "}"))
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(contentsOf: "}\n".utf8)
        return output
    }
}

/// One entry of the envelope's `assets` list: what the fingerprint covers plus pixel size.
public struct StoredAsset: Equatable, Sendable {
    /// File name in `assets/`.
    public var name: String
    /// Size in bytes.
    public var byteCount: Int
    /// Lowercase hex SHA-256 of the bytes (also the asset's HTTP ETag).
    public var sha256: String
    /// Pixel width, when the writer knew it.
    public var width: Int?
    /// Pixel height, when the writer knew it.
    public var height: Int?

    /// Creates an entry.
    public init(name: String, byteCount: Int, sha256: String, width: Int? = nil, height: Int? = nil) {
        self.name = name
        self.byteCount = byteCount
        self.sha256 = sha256
        self.width = width
        self.height = height
    }

    /// The fingerprint's view of this asset.
    public var fingerprintLine: Fingerprint.AssetLine {
        Fingerprint.AssetLine(name: name, byteCount: byteCount, sha256: sha256)
    }
}

/// The contents of `current.json`: the current generation and the kept ones, newest first.
public struct Pointer: Equatable, Sendable {
    /// The id readers try first.
    public var current: String
    /// Older ids to fall back to, newest first (absent key = empty).
    public var previous: [String]

    /// Creates a pointer.
    public init(current: String, previous: [String]) {
        self.current = current
        self.previous = previous
    }

    /// Decodes `current.json`; nil when it is not a usable pointer (readers then use the folder listing).
    ///
    /// All or nothing, as WidgetBridge's `Codable` readers decode it: `current` must be a string
    /// and `previous` absent, null, or a list of strings; anything else makes the whole pointer
    /// unusable rather than partly used.
    public static func decode(_ bytes: [UInt8]) -> Pointer? {
        guard let root = try? JSONParser.parse(bytes), let current = root["current"]?.stringValue else { return nil }
        switch root["previous"] {
        case nil, .null?:
            return Pointer(current: current, previous: [])
        case .array(let elements)?:
            let previous = elements.compactMap(\.stringValue)
            guard previous.count == elements.count else { return nil }
            return Pointer(current: current, previous: previous)
        default:
            return nil
        }
    }

    /// The bytes written to `current.json`.
    public func encoded() -> [UInt8] {
        var output = Array("{\"current\":".utf8)
        CompactJSON.writeString(current, to: &output)
        output.append(contentsOf: ",\"previous\":[".utf8)
        for (index, id) in previous.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            CompactJSON.writeString(id, to: &output)
        }
        output.append(contentsOf: "]}\n".utf8)
        return output
    }
}
