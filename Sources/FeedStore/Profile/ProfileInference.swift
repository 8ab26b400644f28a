/// A profile guessed from a payload and its assets, for a group that has none: only what is
/// unambiguous, the items array and how an item's image is named. It drives the image check,
/// never the title, unused-asset or empty-state checks (those need the user's word).
public struct InferredProfile: Sendable, Equatable {
    /// The guess: `items`, and `image` when one rule names an asset for at least half the items.
    public var profile: WidgetProfile
    /// The members guessed (`items`, `image`), for the answers that say so.
    public var inferred: [String]

    /// Items looked at to choose the image rule: the rule is the one that fits them.
    static let sampledItems = 1_000
    /// Member names of items considered for the image rule.
    static let consideredFields = 64

    /// The guess for `payload` whose generation has `assetNames`; nil when no single array of
    /// objects is there.
    public init?(payload: JSONNode, assetNames: [String]) {
        guard let (pointer, array) = Self.itemsArray(in: payload) else { return nil }
        profile = WidgetProfile(items: pointer)
        inferred = ["items"]
        if let image = Self.imageRule(items: array, assetNames: Set(assetNames)) {
            profile.image = image
            inferred.append("image")
        }
    }

    // MARK: Items

    /// The one array of objects outside any other array (objects searched four levels deep);
    /// the one non-empty such array when there are several and only one has items.
    static func itemsArray(in payload: JSONNode) -> (WidgetProfile.Pointer, JSONNode)? {
        var found: [(String, JSONNode)] = []
        collectArrays(payload, pointer: "", depth: 0, into: &found)
        let candidates = found.count > 1 ? found.filter { $0.1.count > 0 } : found
        guard candidates.count == 1, let (text, array) = candidates.first,
            let pointer = try? WidgetProfile.Pointer(text, member: "items")
        else { return nil }
        return (pointer, array)
    }

    private static func collectArrays(
        _ node: JSONNode, pointer: String, depth: Int, into found: inout [(String, JSONNode)]
    ) {
        switch node.kind {
        case .array:
            var allObjects = true
            node.forEachElement { _, element in allObjects = allObjects && element.kind == .object }
            if allObjects { found.append((pointer, node)) }
        case .object where depth < 4:
            node.forEachMember { name, value in
                collectArrays(value, pointer: pointer + "/" + escape(name), depth: depth + 1, into: &found)
            }
        default:
            break
        }
    }

    /// RFC 6901: `~` → `~0`, `/` → `~1`.
    static func escape(_ token: String) -> String {
        token.replacingOccurrences("~", with: "~0").replacingOccurrences("/", with: "~1")
    }

    // MARK: Image

    /// The pointer or `{field}.ext` template naming an asset for the most sampled items, when
    /// that is at least half of them and no other rule does as well.
    static func imageRule(items: JSONNode, assetNames: Set<String>) -> WidgetProfile.ImageRule? {
        guard !assetNames.isEmpty else { return nil }
        var sample: [JSONNode] = []
        items.forEachElement { position, element in
            if position < sampledItems { sample.append(element) }
        }
        let fields = fieldNames(of: sample)
        let suffixes = Set(assetNames.compactMap { name in name.lastIndex(of: ".").map { String(name[$0...]) } })
        var candidates: [WidgetProfile.ImageRule] = []
        for field in fields {
            if let pointer = try? WidgetProfile.Pointer("/" + escape(field), member: "image") {
                candidates.append(.pointer(pointer))
            }
            if !field.contains("{"), !field.contains("}") {
                candidates += suffixes.sorted().map { .template(NameTemplate(field: field, suffix: $0)) }
            }
        }
        var best: (rule: WidgetProfile.ImageRule, count: Int)?
        var tied = false
        for rule in candidates {
            let resolver = WidgetItems(profile: WidgetProfile(items: .whole, image: rule), payload: items)
            let count = sample.filter { item in
                if case .asset(let name) = resolver.item(item, index: 0).image { return assetNames.contains(name) }
                return false
            }.count
            guard count > 0 else { continue }
            if count > best?.count ?? 0 {
                best = (rule, count)
                tied = false
            } else if count == best?.count {
                tied = true
            }
        }
        guard let best, !tied, best.count * 2 >= sample.count else { return nil }
        return best.rule
    }

    /// Member names of the sampled items in the order first seen, at most `consideredFields`.
    private static func fieldNames(of items: [JSONNode]) -> [String] {
        var names: [String] = []
        var seen = Set<String>()
        for item in items {
            item.forEachMember { name, _ in
                if names.count < consideredFields, seen.insert(name).inserted { names.append(name) }
            }
        }
        return names
    }
}

extension String {
    /// Every `target` replaced by `replacement` (FoundationEssentials' spelling is not everywhere).
    func replacingOccurrences(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
