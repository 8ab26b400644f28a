/// The image names a payload's strings (values and member names) give, and which assets they reach.
struct PayloadReferences {
    /// A file name the payload gives that is not an asset.
    struct Missing {
        /// The file name looked for.
        var fileName: String
        /// The string that named it (first occurrence).
        var string: String
        /// Where (RFC 6901) the first occurrence is.
        var pointer: String
        /// Whether the first occurrence is a member name rather than a value.
        var isMemberName: Bool
        /// How many strings name it.
        var count: Int
    }

    /// Asset names some string reaches, by name, path or stem.
    private(set) var referenced = Set<String>()
    /// Asset names some string gives in full (a name, a path or URL ending in it), not by stem.
    private(set) var named = Set<String>()
    /// Missing file names, in payload order.
    private(set) var missing: [Missing] = []

    private let names: Set<String>
    private let stems: [String: [String]]
    private var missingIndex: [String: Int] = [:]

    /// The payload's document.
    private let document: JSONDocument

    init(payload: JSONNode, assetNames: [String]) {
        names = Set(assetNames)
        var stems: [String: [String]] = [:]
        for name in assetNames {
            if let dot = name.lastIndex(of: "."), dot != name.startIndex {
                stems[String(name[..<dot]), default: []].append(name)
            }
        }
        self.stems = stems
        document = payload.document
        var walk = TapeWalk(payload)
        while let string = walk.nextString() {
            consider(JSONNode(document: document, index: string.index), isMemberName: string.isMemberName, at: walk)
        }
    }

    /// Without assets only an image reference counts, and most strings can be none: those are
    /// judged in the document's bytes, with no String made (every string of every publish
    /// passes here).
    private mutating func consider(_ node: JSONNode, isMemberName: Bool, at walk: TapeWalk) {
        if names.isEmpty, stems.isEmpty, node.isUnescapedString(where: { !ImageReference.mayName($0) }) { return }
        consider(node.stringValue ?? "", isMemberName: isMemberName, at: walk)
    }

    private mutating func consider(_ string: String, isMemberName: Bool, at walk: TapeWalk) {
        // Without assets (most JSON publishes) no string is hashed.
        if !names.isEmpty, names.contains(string) {
            referenced.insert(string)
            named.insert(string)
        } else if let reading = ImageReference.read(string) {
            if names.contains(reading.fileName) {
                referenced.insert(reading.fileName)
                named.insert(reading.fileName)
            } else if !reading.isURL {
                noteMissing(reading.fileName, string: string, isMemberName: isMemberName, at: walk)
            }
        } else if !stems.isEmpty, let assets = stems[string] {
            referenced.formUnion(assets)
        }
    }

    private mutating func noteMissing(_ fileName: String, string: String, isMemberName: Bool, at walk: TapeWalk) {
        if let index = missingIndex[fileName] {
            missing[index].count += 1
        } else {
            missingIndex[fileName] = missing.count
            missing.append(
                Missing(
                    fileName: fileName, string: string, pointer: walk.pointer, isMemberName: isMemberName, count: 1))
        }
    }
}
