import FeedStore
import Foundation
import Testing

/// Parsing on several threads at once, as the work pool does. Under ThreadSanitizer
/// (scripts/sanitizers.sh) this fails if the parser writes any location that two parses share:
/// a builder without stored properties passed `inout` did, since every such variable has one address.
@Suite struct ConcurrentParsingTests {
    @Test func treesValidationsAndDocumentsParseOnManyThreadsAtOnce() throws {
        let input = Array(#"{"quotes":[{"id":"q1","text":"a"},{"id":"q2","text":"b"}],"n":1.5}"#.utf8)
        let expected = try JSONParser.parse(input)
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            do {
                switch index % 3 {
                case 0: if try JSONParser.parse(input) != expected { failures.add("tree \(index)") }
                case 1: try JSONParser.validate(input)
                default: if try JSONDocument.parse(input).bytes.isEmpty { failures.add("document \(index)") }
                }
            } catch {
                failures.add("\(index): \(error)")
            }
        }
        #expect(failures.all.isEmpty)
    }
}

/// Failures gathered from several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}
