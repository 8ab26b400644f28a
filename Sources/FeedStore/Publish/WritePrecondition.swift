/// A condition on the served feed that a publish or a clear checks under the group lock, so two
/// writers cannot both act on the same state (the HTTP layer maps `If-Match`/`If-None-Match` here).
public enum WritePrecondition: Equatable, Sendable {
    /// The served generation's fingerprint is one of these.
    case servedFingerprint(in: [String])
    /// Some generation is served (any fingerprint).
    case anyFeed
    /// No generation is served.
    case noFeed
    /// Every one of these holds (`If-Match` and `If-None-Match` together).
    indirect case all([WritePrecondition])

    /// Whether the condition holds for the generation served now.
    public func holds(for served: Generation?) -> Bool {
        switch self {
        case .servedFingerprint(let fingerprints): return served.map { fingerprints.contains($0.fingerprint) } ?? false
        case .anyFeed: return served != nil
        case .noFeed: return served == nil
        case .all(let conditions): return conditions.allSatisfy { $0.holds(for: served) }
        }
    }
}
