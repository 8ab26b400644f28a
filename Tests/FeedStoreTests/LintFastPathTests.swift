import Testing

@testable import FeedStore

/// The lint reads every string of every publish, so its hot paths read bytes in place. Each is
/// held here to the plain definition it replaces, over awkward and generated strings.
@Suite struct LintFastPathTests {
    /// Strings at the edges: bare extensions, case, URLs with queries, paths, non-ASCII, escapes.
    static let awkward: [String] = [
        "", "q1.jpg", ".jpg", "x.jpg", "X.JPG", "a.jpeg", "a.jpe", "a.PnG", "b.webp", "c.gif", "d.heic", "e.heif",
        "jpg", "xjpg", "x.jpgx", "x.jpg ", "photos/q1.jpg", "./q1.jpg", "/assets/g/1-ab/q1.jpg", "dir/.jpg",
        "https://cdn.example/q1.jpg?v=2", "https://cdn.example/q1.jpg#top", "https://cdn.example/q1?x=.jpg",
        "data:image/png;base64,AAAA", "mailto:a.jpg", "1http://x.jpg", "a?b.jpg", "a#b.jpg", "ü.jpg", "日本.png",
        "x\u{0E}jpg", "Quote 1: the lazy dog", "q\"1.jpg", "q\\1.jpg", "tab\t.jpg", "line\n.png", "http:x.jpg",
        // A combining mark or joiner after a separator, or a prepended mark before it, makes it
        // no separator between Characters.
        "x/\u{301}q.jpg", "\u{600}/q.jpg", "https://cdn/a.jpg?\u{301}", "a/\u{200D}b.png", "a\r\n/b.gif",
    ]

    /// Generated strings from an alphabet the rules care about.
    static func generated(count: Int) -> [String] {
        var generator = SeededGenerator(seed: 23)
        let alphabet = Array("aJpPgGeEfFwWbBhHiIcC.:/?#\\\"ü 1\u{0E}\n\u{301}\u{200D}\u{600}")
        return (0..<count).map { _ in
            String(
                (0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
    }

    /// `read` as it was written over Characters and generic suffixes.
    static func plainRead(_ string: String) -> ImageReference.Reading? {
        func hasExtension(_ bytes: Substring.UTF8View) -> Bool {
            ImageReference.imageExtensions.contains { suffix in
                bytes.count > suffix.utf8.count
                    && zip(bytes.suffix(suffix.utf8.count), suffix.utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 }
            }
        }
        let isURL = ImageReference.hasScheme(string)
        var path = Substring(string)
        if isURL, let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard hasExtension(path.utf8) else { return nil }
        let fileName = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path
        guard hasExtension(fileName.utf8) else { return nil }
        return .init(fileName: String(fileName), isURL: isURL)
    }

    @Test func readingsMatchThePlainDefinition() {
        for string in Self.awkward + Self.generated(count: 20000) {
            #expect(ImageReference.read(string) == Self.plainRead(string), "\(string.debugDescription)")
        }
        #expect(ImageReference.read("X.JPG")?.fileName == "X.JPG")
        #expect(ImageReference.read("https://cdn.example/q1.jpg?v=2") == .init(fileName: "q1.jpg", isURL: true))
        #expect(ImageReference.read(".jpg") == nil, "an extension alone names nothing")
    }

    /// `mayName` may say yes too often, never too rarely: a string it rules out names no image.
    @Test func aStringRuledOutNamesNoImage() {
        for string in Self.awkward + Self.generated(count: 20000) {
            var bytes = string
            let ruledOut = bytes.withUTF8 { !ImageReference.mayName($0) }
            if ruledOut { #expect(ImageReference.read(string) == nil, "\(string.debugDescription)") }
        }
    }

    /// Member lookups compare canonical literals in place, keys that need escaping included.
    @Test func membersAreFoundByTheirCanonicalNames() throws {
        let keys = ["a", "", "q\"1", "back\\slash", "tab\t", "ü", "日本", "\u{01}", "a/b", "~"]
        var object = "{"
        for (position, key) in keys.enumerated() {
            var literal: [UInt8] = []
            CompactJSON.writeString(key, to: &literal)
            object += (position == 0 ? "" : ",") + String(decoding: literal, as: UTF8.self) + ":\(position)"
        }
        let root = try JSONDocument.parse(Array((object + "}").utf8)).root
        for (position, key) in keys.enumerated() {
            #expect(root[key]?.numberLiteral == "\(position)", "\(key.debugDescription)")
        }
        #expect(root["A"] == nil)
        #expect(root["ab"] == nil)
        #expect(try JSONDocument.parse(Array("[1]".utf8)).root["a"] == nil)
    }

    /// Pointers resolve in a document by their tokens' canonical literals, and member names that
    /// needed escaping come back decoded in a warning's pointer.
    @Test func escapedMemberNamesResolveAndPointBack() throws {
        let root = try JSONDocument.parse(Array(#"{"a\"b":{"c/d":{"e~f":{"t\tab":"gone.jpg"}}}}"#.utf8)).root
        let pointer = try #require(JSONPointer(#"/a"b/c~1d/e~0f/t\#tab"#))
        #expect(pointer.resolve(in: root)?.stringValue == "gone.jpg")
        #expect(JSONPointer("/a\\\"b")?.resolve(in: root) == nil)
        let report = FeedLint().report(payload: root, assets: [], limit: 1 << 20)
        let warning = try #require(report.warnings.first { $0.code == .assetNotFound })
        #expect(warning.pointer == #"/a"b/c~1d/e~0f/t\#tab"#)
        #expect(JSONPointer("/\u{E9}") == JSONPointer("/e\u{301}"), "equal as their tokens are, whatever their bytes")
    }

    /// `hasText` says what `text(at:in:) != nil` says, without decoding.
    @Test func hasTextAgreesWithText() throws {
        let root = try JSONDocument.parse(
            Array(#"{"s":"x","e":"","n":0,"f":-1.5e3,"b":true,"z":null,"o":{},"a":["y"],"q":"\"","u":"\u0001"}"#.utf8)
        ).root
        for name in ["s", "e", "n", "f", "b", "z", "o", "a", "q", "u", "missing"] {
            let pointer = try WidgetProfile.Pointer("/" + name, member: "title")
            #expect(
                WidgetItems.hasText(at: pointer, in: root) == (WidgetItems.text(at: pointer, in: root) != nil),
                "\(name)")
        }
    }

    /// Strings with an escape go the long way; others are read in place.
    @Test func onlyUnescapedStringsAreReadInPlace() throws {
        let root = try JSONDocument.parse(Array(#"["plain.jpg","q\"1.jpg",1,""]"#.utf8)).root
        var seen: [String] = []
        let answers = root.elements.map { node in
            node.isUnescapedString { bytes in
                seen.append(String(decoding: bytes, as: UTF8.self))
                return true
            }
        }
        #expect(answers == [true, false, false, true])
        #expect(seen == ["plain.jpg", ""])
    }
}

/// A small deterministic generator (SplitMix64), so a failure names a string that comes back.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
