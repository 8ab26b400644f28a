import FeedStore

/// Turns a served generation into the bytes and headers of `GET /feeds/{group}`.
///
/// The body is a pure function of the served generation, so the strong ETag (its fingerprint)
/// always names identical bytes; what was skipped on the way goes in a header instead.
enum FeedRendering {
    /// The JSON body for a generation, and where the payload lies in it.
    static func body(group: String, generation: Generation) -> (bytes: [UInt8], payload: Range<Int>) {
        var output = Array("{\"generationId\":".utf8)
        CompactJSON.writeString(generation.id, to: &output)
        output.append(contentsOf: ",\"schemaVersion\":\(generation.schemaVersion)".utf8)
        output.append(contentsOf: ",\"generatedAtEpochMs\":\(generation.generatedAtEpochMs),\"fingerprint\":".utf8)
        CompactJSON.writeString(generation.fingerprint, to: &output)
        output.append(contentsOf: ",\"payload\":".utf8)
        let payloadStart = output.count
        output.append(contentsOf: generation.compactPayload)
        let payload = payloadStart..<output.count
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
        return (output, payload)
    }

    /// The length of `body(group:generation:)` without rendering the payload: the envelope around
    /// an empty payload, plus the payload, which is copied into it unchanged.
    static func length(group: String, generation: Generation) -> Int {
        var envelope = generation
        envelope.compactPayload = []
        return body(group: group, generation: envelope).bytes.count + generation.compactPayload.count
    }

    /// Where an asset is served (names are safe names, so no escaping is needed).
    static func assetURL(group: String, generation: String, name: String) -> String {
        "/assets/\(group)/\(generation)/\(name)"
    }

    /// Skipped candidates named one by one in `X-Feed-Fallback` and in a 404's detail; the rest
    /// are counted. The header must fit libmicrohttpd's per-connection buffer (16 KiB, shared
    /// with every other header), and the full list is what `/feeds/{group}/generations` is for.
    static let fallbackEntriesShown = 3
    /// Longest reason text in one fallback entry, in characters.
    static let fallbackDetailLimit = 160

    /// `X-Feed-Fallback`: the first skipped candidates as `id;reason=code;detail="..."`,
    /// comma-separated, then `more;count=N;see="<generations URL>"` when there were more;
    /// nil when the current generation was served directly. At most about 1.2 KB.
    static func fallbackHeader(_ read: FeedRead, group: String, schemaVersion: Int?) -> String? {
        guard read.isFallback else { return nil }
        var entries: [String] = []
        if let problem = read.pointerProblem {
            entries.append("current.json;reason=unusable-pointer;detail=\(quoted(problem))")
        }
        for skipped in read.skipped.prefix(fallbackEntriesShown) {
            entries.append(
                "\(headerSafe(skipped.id));reason=\(skipped.reason.code);detail=\(quoted(skipped.reason.description))")
        }
        let hidden = read.skipped.count - min(read.skipped.count, fallbackEntriesShown)
        if hidden > 0 {
            entries.append(
                "more;count=\(hidden);see=\(quoted(generationsURL(group: group, schemaVersion: schemaVersion)))")
        }
        return entries.joined(separator: ", ")
    }

    /// The skipped candidates for a 404's detail, an unusable pointer first, bounded the same
    /// way as `X-Feed-Fallback`.
    static func skippedSummary(_ read: FeedRead, group: String, schemaVersion: Int?) -> String? {
        // The pointer's problem names the file itself ("current.json is not a valid pointer").
        let pointer = read.pointerProblem.map { [clipped($0)] } ?? []
        let entries =
            pointer + read.skipped.prefix(fallbackEntriesShown).map { "\($0.id) (\(clipped($0.reason.description)))" }
        guard !entries.isEmpty else { return nil }
        var summary = entries.joined(separator: "; ")
        let hidden = read.skipped.count - min(read.skipped.count, fallbackEntriesShown)
        if hidden > 0 {
            summary += "; and \(hidden) more (see \(generationsURL(group: group, schemaVersion: schemaVersion)))"
        }
        return summary
    }

    private static func generationsURL(group: String, schemaVersion: Int?) -> String {
        "/feeds/\(group)/generations" + (schemaVersion.map { "?schemaVersion=\($0)" } ?? "")
    }

    private static func clipped(_ text: String) -> String {
        text.count <= fallbackDetailLimit ? text : String(text.prefix(fallbackDetailLimit - 1)) + "…"
    }

    private static func quoted(_ text: String) -> String {
        "\"" + headerSafe(clipped(text)).replacingQuotes() + "\""
    }

    /// Printable ASCII only: a header value must never carry CR, LF or other controls.
    private static func headerSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { (0x20...0x7E).contains($0.value) ? $0 : "?" }))
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = ""
        for character in self {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
