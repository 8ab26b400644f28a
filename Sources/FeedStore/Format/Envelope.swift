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
    /// The asset list this project adds (`{name, bytes, sha256}`); nil in WidgetBridge's own files.
    public var assets: [Fingerprint.AssetLine]?

    /// Creates an envelope.
    public init(schemaVersion: Int, generatedAtEpochMs: Int64, fingerprint: String, compactPayload: [UInt8], assets: [Fingerprint.AssetLine]?) {
        self.schemaVersion = schemaVersion
        self.generatedAtEpochMs = generatedAtEpochMs
        self.fingerprint = fingerprint
        self.compactPayload = compactPayload
        self.assets = assets
    }

    /// Why a `feed.json` could not be used.
    public enum DecodeError: Error, Equatable, Sendable {
        /// Not JSON at all.
        case unparsable(JSONParseError)
        /// JSON, but a required key is missing or has the wrong type.
        case invalid(String)
    }

    /// Decodes `feed.json` bytes in any valid JSON formatting; unknown keys are ignored.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Envelope {
        let root: JSONValue
        do { root = try JSONParser.parse(bytes) } catch { throw .unparsable(error) }
        guard case .object = root else { throw .invalid("feed.json is not a JSON object") }
        guard let schema = root["schemaVersion"]?.integerValue, let schemaVersion = Int(exactly: schema) else {
            throw .invalid("schemaVersion is missing or not an integer")
        }
        guard let generatedAt = root["generatedAtEpochMs"]?.integerValue else {
            throw .invalid("generatedAtEpochMs is missing or not an integer")
        }
        guard let fingerprint = root["fingerprint"]?.stringValue else { throw .invalid("fingerprint is missing or not a string") }
        guard let payload = root["payload"] else { throw .invalid("payload is missing") }
        return Envelope(
            schemaVersion: schemaVersion,
            generatedAtEpochMs: generatedAt,
            fingerprint: fingerprint,
            compactPayload: CompactJSON.bytes(payload),
            assets: try decodeAssets(root["assets"])
        )
    }

    private static func decodeAssets(_ value: JSONValue?) throws(DecodeError) -> [Fingerprint.AssetLine]? {
        guard let value else { return nil }
        guard let elements = value.arrayValue else { throw .invalid("assets is not an array") }
        var lines: [Fingerprint.AssetLine] = []
        for element in elements {
            guard let name = element["name"]?.stringValue,
                  let bytes = element["bytes"]?.integerValue, let count = Int(exactly: bytes),
                  let sha256 = element["sha256"]?.stringValue else {
                throw .invalid("an assets entry lacks name, bytes or sha256")
            }
            lines.append(Fingerprint.AssetLine(name: name, byteCount: count, sha256: sha256))
        }
        return lines
    }

    /// The compact `feed.json` bytes this project writes (WidgetBridge's readers accept any formatting).
    public func encoded() -> [UInt8] {
        var output = Array("{\"schemaVersion\":\(schemaVersion),\"generatedAtEpochMs\":\(generatedAtEpochMs),\"fingerprint\":".utf8)
        CompactJSON.writeString(fingerprint, to: &output)
        output.append(contentsOf: ",\"payload\":".utf8)
        output.append(contentsOf: compactPayload)
        if let assets {
            output.append(contentsOf: ",\"assets\":[".utf8)
            for (index, asset) in assets.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: "{\"name\":".utf8)
                CompactJSON.writeString(asset.name, to: &output)
                output.append(contentsOf: ",\"bytes\":\(asset.byteCount),\"sha256\":\"\(asset.sha256)\"}".utf8)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(contentsOf: "}\n".utf8)
        return output
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
    public static func decode(_ bytes: [UInt8]) -> Pointer? {
        guard let root = try? JSONParser.parse(bytes), let current = root["current"]?.stringValue else { return nil }
        let previous = root["previous"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return Pointer(current: current, previous: previous)
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
