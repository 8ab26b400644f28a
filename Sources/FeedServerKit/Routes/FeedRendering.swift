import FeedStore

/// Turns a served generation into the bytes and headers of `GET /feeds/{group}`.
///
/// The body is a pure function of the served generation, so the strong ETag (its fingerprint)
/// always names identical bytes; what was skipped on the way goes in a header instead.
enum FeedRendering {
    /// The JSON body for a generation.
    static func body(group: String, generation: Generation) -> [UInt8] {
        var output = Array("{\"generationId\":".utf8)
        CompactJSON.writeString(generation.id, to: &output)
        output.append(contentsOf: ",\"schemaVersion\":\(generation.schemaVersion),\"generatedAtEpochMs\":\(generation.generatedAtEpochMs),\"fingerprint\":".utf8)
        CompactJSON.writeString(generation.fingerprint, to: &output)
        output.append(contentsOf: ",\"payload\":".utf8)
        output.append(contentsOf: generation.compactPayload)
        output.append(contentsOf: ",\"assets\":[".utf8)
        for (index, asset) in generation.assets.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: "{\"name\":".utf8)
            CompactJSON.writeString(asset.name, to: &output)
            output.append(contentsOf: ",\"bytes\":\(asset.bytes)".utf8)
            if let width = asset.width, let height = asset.height {
                output.append(contentsOf: ",\"width\":\(width),\"height\":\(height)".utf8)
            }
            output.append(contentsOf: ",\"url\":".utf8)
            CompactJSON.writeString(assetURL(group: group, generation: generation.id, name: asset.name), to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: "]}\n".utf8)
        return output
    }

    /// Where an asset is served (names are safe names, so no escaping is needed).
    static func assetURL(group: String, generation: String, name: String) -> String {
        "/assets/\(group)/\(generation)/\(name)"
    }

    /// `X-Feed-Fallback`: each skipped candidate as `id;reason=code;detail="..."`, comma-separated;
    /// nil when the current generation was served directly.
    static func fallbackHeader(_ read: FeedRead) -> String? {
        guard read.isFallback else { return nil }
        var entries: [String] = []
        if let problem = read.pointerProblem { entries.append("current.json;reason=unusable-pointer;detail=\(quoted(problem))") }
        for skipped in read.skipped {
            entries.append("\(headerSafe(skipped.id));reason=\(skipped.reason.code);detail=\(quoted(skipped.reason.description))")
        }
        return entries.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        "\"" + headerSafe(text).replacingQuotes() + "\""
    }

    /// Printable ASCII only: a header value must never carry CR, LF or other controls.
    private static func headerSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { (0x20...0x7E).contains($0.value) ? $0 : "?" }))
    }
}

private extension String {
    func replacingQuotes() -> String {
        var result = ""
        for character in self {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
