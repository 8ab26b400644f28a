import Foundation
import Testing

@testable import FeedStore

/// `TapeWalk` finds the strings a recursive walk over `JSONNode`s finds, in the same order, with
/// the same member-name flag and pointer.
@Suite struct TapeWalkTests {
    /// One string a walk met: its tape index, whether it is a member name, and its pointer.
    struct Met: Equatable, CustomStringConvertible {
        var index: Int
        var isMemberName: Bool
        var pointer: String
        var description: String { "\(index) \(isMemberName ? "name" : "value") \(pointer)" }
    }

    /// The plain definition: recursion through members and elements, the path kept as tokens.
    static func recursiveWalk(_ node: JSONNode, path: [String] = [], into met: inout [Met]) {
        switch node.kind {
        case .object:
            node.forEachMemberNode { name, value in
                let token = (name.stringValue ?? "").replacingOccurrences(of: "~", with: "~0")
                    .replacingOccurrences(of: "/", with: "~1")
                met.append(
                    Met(index: name.index, isMemberName: true, pointer: (path + [token]).map { "/" + $0 }.joined()))
                recursiveWalk(value, path: path + [token], into: &met)
            }
        case .array:
            node.forEachElement { position, element in recursiveWalk(element, path: path + ["\(position)"], into: &met)
            }
        case .string:
            met.append(Met(index: node.index, isMemberName: false, pointer: path.map { "/" + $0 }.joined()))
        case .number, .bool, .null:
            break
        }
    }

    static func tapeWalk(_ node: JSONNode) -> [Met] {
        var walk = TapeWalk(node)
        var met: [Met] = []
        while let string = walk.nextString() {
            met.append(Met(index: string.index, isMemberName: string.isMemberName, pointer: walk.pointer))
        }
        return met
    }

    /// A random document: nested objects and arrays (empty ones too), every kind of scalar,
    /// names with `/`, `~` and escapes.
    static func document(depth: Int, using generator: inout SeededGenerator) -> String {
        let names = ["\"a\"", "\"b/c\"", "\"~0\"", "\"\"", "\"\\u00e9\"", "\"x\\\"y\""]
        let scalars = ["\"s\"", "\"q.jpg\"", "1", "-2.5e3", "true", "false", "null", "\"\\n\""]
        let choice = depth > 4 ? 2 : Int.random(in: 0...2, using: &generator)
        let count = Int.random(in: 0...3, using: &generator)
        switch choice {
        case 0:
            let members = names.shuffled(using: &generator).prefix(count).map {
                $0 + ":" + document(depth: depth + 1, using: &generator)
            }
            return "{" + members.joined(separator: ",") + "}"
        case 1:
            return "[" + (0..<count).map { _ in document(depth: depth + 1, using: &generator) }.joined(separator: ",")
                + "]"
        default:
            return scalars.randomElement(using: &generator) ?? "null"
        }
    }

    @Test func findsWhatTheRecursiveWalkFinds() throws {
        var generator = SeededGenerator(seed: 23)
        for _ in 0..<2000 {
            let text = Self.document(depth: 0, using: &generator)
            let document = try JSONDocument.parse(Array(text.utf8))
            var expected: [Met] = []
            Self.recursiveWalk(document.root, into: &expected)
            #expect(Self.tapeWalk(document.root) == expected, "\(text)")
        }
    }

    /// From a value inside a document, the walk stays inside it and points from it.
    @Test func aWalkFromAnInnerValueStaysInIt() throws {
        let document = try JSONDocument.parse(Array(#"{"a":{"b":["x",{"c/d":"y"}]},"e":"z"}"#.utf8))
        let inner = try #require(document.root["a"])
        #expect(Self.tapeWalk(inner).map(\.pointer) == ["/b", "/b/0", "/b/1/c~1d", "/b/1/c~1d"])
        #expect(Self.tapeWalk(inner).map(\.isMemberName) == [true, false, true, false])
    }
}
