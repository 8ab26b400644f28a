/// The member names of one object, kept as hashes of their decoded bytes and where each was
/// read, not as copies: an object of a million members costs a table of integers, not a million
/// arrays. A hash match is verified by decoding the earlier name again (`JSONGrammar`). An object
/// with one member, the common case, makes no table at all.
struct MemberNames {
    /// The first name's hash and offset.
    private var sole: (hash: Int, offset: Int)?
    /// From the second name on: each hash's first offset, and further offsets only on a collision.
    private var first: [Int: Int] = [:]
    private var more: [Int: [Int]] = [:]

    /// Offsets of earlier names whose hash equals that of `name` (nil: none, so no duplicate).
    func offsets(matching name: [UInt8]) -> [Int]? {
        guard let sole else { return nil }
        let hash = name.hashValue
        if first.isEmpty { return sole.hash == hash ? [sole.offset] : nil }
        guard let offset = first[hash] else { return nil }
        return [offset] + (more[hash] ?? [])
    }

    /// Remembers `name`, read at `offset`.
    mutating func insert(_ name: [UInt8], at offset: Int) {
        let hash = name.hashValue
        guard let sole else {
            self.sole = (hash, offset)
            return
        }
        if first.isEmpty { first[sole.hash] = sole.offset }
        if first[hash] == nil { first[hash] = offset } else { more[hash, default: []].append(offset) }
    }
}
