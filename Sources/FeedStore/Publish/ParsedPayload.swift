/// A payload parsed by a store's rules (`FeedStore.parsePayload`): its canonical bytes, what the
/// fingerprint is computed over, and the tape a lint reads it through. Parsed once per publish.
public struct ParsedPayload: Sendable {
    /// The payload as a document; its `bytes` are the canonical compact form the store writes.
    public let document: JSONDocument
    /// The limits it was parsed within (a store with stricter ones parses it again).
    let limits: JSONLimits
}
