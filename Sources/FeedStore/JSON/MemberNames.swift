/// A member name as one `UInt64`: the high 32 bits of its decoded bytes' hash (Swift's seeded
/// hasher, so no client can make names collide on purpose), the low 32 bits where it was read.
/// An object's names are checked for duplicates by sorting these keys when the object ends:
/// equal names have equal hashes, so they sort next to each other, and a hash match is verified
/// by decoding both names again (`JSONGrammar`). An object of a million members costs 8 MB of
/// keys, and a parse reuses one array for every object (no allocation per object).
enum MemberNames {
    /// The key of `name`, read at `offset` (documents are at most 4 GiB: `JSONLimits`).
    static func key(_ name: UnsafeBufferPointer<UInt8>, offset: Int) -> UInt64 {
        // The bytes in one call: an array's own hash feeds the hasher a byte at a time.
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(name))
        return UInt64(truncatingIfNeeded: hasher.finalize()) & 0xFFFF_FFFF_0000_0000
            | UInt64(truncatingIfNeeded: offset) & 0xFFFF_FFFF
    }

    /// The hash half of `key`.
    static func hash(_ key: UInt64) -> UInt64 { key >> 32 }

    /// The offset half of `key`.
    static func offset(_ key: UInt64) -> Int { Int(key & 0xFFFF_FFFF) }
}

extension JSONGrammar {
    /// Throws for the first member name (in document order) of the object whose names start at
    /// `start` in `memberNames` that repeats an earlier one. Names are compared as bytes: Swift
    /// `String`s are equal under canonical equivalence, so a precomposed and a decomposed "é"
    /// would wrongly count as the same member.
    mutating func checkDuplicates(from start: Int) throws(JSONParseError) {
        guard memberNames.count - start >= 2 else { return }
        memberNames.withUnsafeMutableBufferPointer { keys in
            var object = UnsafeMutableBufferPointer(rebasing: keys[start...])
            object.sort()
        }
        var first: Int?
        var run = start
        while run < memberNames.count {
            var end = run + 1
            while end < memberNames.count, MemberNames.hash(memberNames[end]) == MemberNames.hash(memberNames[run]) {
                end += 1
            }
            // Within a run of one hash, offsets ascend: the first name equal to an earlier one.
            for later in (run + 1)..<end {
                let offset = MemberNames.offset(memberNames[later])
                if let found = first, found < offset { break }
                if try hasName(at: memberNames[run..<later].map(MemberNames.offset), matchingNameAt: offset) {
                    first = offset
                    break
                }
            }
            run = end
        }
        guard let first else { return }
        let resume = position
        position = first
        try parseString()
        position = resume
        throw JSONParseError(
            offset: first, reason: "duplicate member name \"\(String(decoding: decodedString, as: UTF8.self))\"")
    }

    /// Whether the name read at `offset` equals one read at any of `offsets`.
    private mutating func hasName(at offsets: [Int], matchingNameAt offset: Int) throws(JSONParseError) -> Bool {
        let resume = position
        defer { position = resume }
        position = offset
        try parseString()
        return try hasName(at: offsets)
    }

    private mutating func hasName(at offsets: [Int]) throws(JSONParseError) -> Bool {
        let current = decodedString
        let resume = position
        defer { position = resume }
        for offset in offsets {
            position = offset
            try parseString()
            if decodedString == current { return true }
        }
        return false
    }
}
