import FeedStore

/// The on-disk format's decoders: `feed.json` (envelope), `current.json` (pointer), generation ids.
/// The same bytes go to all three, so fixture files seed every one.
enum FormatTarget {
    static let target = FuzzTarget(
        name: "format",
        summary: "Envelope.decode / Pointer.decode / GenerationID on the same bytes: what decodes re-encodes to "
            + "valid JSON that decodes to the same envelope or pointer; a decoded payload is already canonical; "
            + "an id's epoch milliseconds are the decimal number before its first '-'.",
        check: check)

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        try checkEnvelope(input)
        try checkPointer(input)
        try checkGenerationID(String(decoding: input, as: UTF8.self))
    }

    private static func checkEnvelope(_ input: [UInt8]) throws(PropertyViolation) {
        guard let envelope = try? Envelope.decode(input) else { return }
        try expect(
            (try? CompactJSON.canonicalize(envelope.compactPayload)) == envelope.compactPayload,
            "a decoded envelope's payload is in canonical compact form", observed: shown(envelope.compactPayload))
        let encoded = envelope.encoded()
        try expect(
            (try? JSONParser.parse(encoded)) != nil, "an envelope encodes to valid JSON", observed: shown(encoded))
        let again: Envelope
        do {
            again = try Envelope.decode(encoded)
        } catch {
            throw PropertyViolation(property: "an encoded envelope decodes", observed: "\(error) for \(shown(encoded))")
        }
        try expect(
            again == written(envelope), "an envelope decodes to what was encoded (pixel sizes kept only in pairs)",
            observed: shown(encoded))
    }

    /// What `encoded()` is documented to keep: width and height only together.
    private static func written(_ envelope: Envelope) -> Envelope {
        var kept = envelope
        kept.assets = envelope.assets?.map { asset in
            var asset = asset
            if asset.width == nil || asset.height == nil { (asset.width, asset.height) = (nil, nil) }
            return asset
        }
        return kept
    }

    private static func checkPointer(_ input: [UInt8]) throws(PropertyViolation) {
        guard let pointer = Pointer.decode(input) else { return }
        let encoded = pointer.encoded()
        try expect((try? JSONParser.parse(encoded)) != nil, "a pointer encodes to valid JSON", observed: shown(encoded))
        try expect(
            Pointer.decode(encoded) == pointer, "a pointer decodes to what was encoded", observed: shown(encoded))
    }

    private static func checkGenerationID(_ id: String) throws(PropertyViolation) {
        guard let epochMs = GenerationID.epochMs(of: id) else { return }
        guard let dash = id.utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw PropertyViolation(property: "an id with epoch milliseconds has a '-'", observed: shown(id))
        }
        let digits = id.utf8[..<dash]
        try expect(
            !digits.isEmpty && digits.allSatisfy { (0x30...0x39).contains($0) } && Int64(Substring(digits)) == epochMs,
            "an id's epoch milliseconds are the decimal digits before its first '-'",
            observed: "\(epochMs) from \(shown(id))")
        let fingerprint = String(id.utf8[id.utf8.index(after: dash)...]) ?? ""
        if epochMs < 100_000_000_000_000_000 {
            let made = GenerationID.make(epochMs: epochMs, fingerprint: fingerprint)
            try expect(
                GenerationID.epochMs(of: made) == epochMs, "a made id gives back its epoch milliseconds",
                observed: shown(made))
        }
    }
}
