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

    init(payload: JSONNode, assetNames: [String]) {
        names = Set(assetNames)
        var stems: [String: [String]] = [:]
        for name in assetNames {
            if let dot = name.lastIndex(of: "."), dot != name.startIndex {
                stems[String(name[..<dot]), default: []].append(name)
            }
        }
        self.stems = stems
        // Without assets only an image reference counts, and most strings can be none: those are
        // judged in the document's bytes, with no String or node made (every string of every
        // publish passes here).
        let skipsPlainStrings = names.isEmpty && stems.isEmpty
        let document = payload.document
        var walk = TapeWalk(payload)
        document.bytes.withUnsafeBufferPointer { bytes in
            while let string = walk.nextString() {
                if skipsPlainStrings, Self.namesNoImage(document.tape[string.index], in: bytes) { continue }
                let node = JSONNode(document: document, index: string.index)
                consider(node.stringValue ?? "", isMemberName: string.isMemberName, at: walk)
            }
        }
    }

    /// Whether the string at `entry` has no escape and its bytes cannot name an image.
    private static func namesNoImage(_ entry: TapeEntry, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard entry.length >= 2 else { return false }
        let start = Int(entry.start)
        let inner = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(start + Int(entry.length) - 1)])
        return !ByteScan.contains(UInt8(ascii: "\\"), in: inner) && !ImageReference.mayName(inner)
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
