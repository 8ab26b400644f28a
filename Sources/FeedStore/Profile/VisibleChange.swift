/// Whether a new generation changes what a widget shows, by its profile: any item's title,
/// subtitle or image (its name or its bytes), the number of items (every hour's item moves), or
/// the empty state. A publish whose bytes change and whose view does not spends a reload for
/// nothing (`invisible-change`).
public enum VisibleChange {
    /// One generation as the comparison needs it: its payload and each asset's digest (its
    /// SHA-256, or its size when the generation records no digest, as WidgetBridge's do not).
    public struct Side {
        /// The payload's root.
        public var payload: JSONNode
        /// Asset name → digest.
        public var digests: [String: String]

        /// A side of the comparison.
        public init(payload: JSONNode, digests: [String: String]) {
            self.payload = payload
            self.digests = digests
        }
    }

    /// Whether `new` shows anything `old` does not, read through `profile`; items are compared in
    /// step, so a long array costs one pass and no copy.
    public static func isVisible(profile: WidgetProfile, old: Side, new: Side) -> Bool {
        let before = WidgetItems(profile: profile, payload: old.payload)
        let after = WidgetItems(profile: profile, payload: new.payload)
        guard before.emptyText == after.emptyText else { return true }
        guard let oldItems = before.array?.elementPositions, let newItems = after.array?.elementPositions else {
            return (before.array == nil) != (after.array == nil)
        }
        guard oldItems.count == newItems.count else { return true }
        for index in oldItems.indices {
            guard let oldNode = old.payload.document.node(atTapePosition: oldItems[index]),
                let newNode = new.payload.document.node(atTapePosition: newItems[index])
            else { return true }
            let was = before.item(oldNode, index: index)
            let now = after.item(newNode, index: index)
            guard was.title == now.title, was.subtitle == now.subtitle, was.image == now.image else { return true }
            if case .asset(let name) = now.image, old.digests[name] != new.digests[name] { return true }
        }
        return false
    }
}
