import ConcurrencyPrimitives
import Testing

@testable import FeedStore

/// Expectations read, refused and checked against entries, near misses ordered.
@Suite struct JournalVerificationTests {
    private func entry(
        _ at: Int64, _ kind: JournalEntry.Kind = .publish, result: String = "published", group: String = "g",
        payload: String? = nil, warnings: [String] = []
    ) -> JournalEntry {
        var entry = JournalEntry(at: at, kind: kind, result: result, group: group, status: 201)
        entry.warnings = warnings
        if let payload { entry.keep(payload: Array(payload.utf8)) }
        return entry
    }

    private func expect(_ json: String) throws -> JournalExpectation { try JournalExpectation(json: Array(json.utf8)) }

    private var journal: [JournalEntry] {
        [
            entry(1, payload: #"{"quotes":[{"text":"one"}]}"#),
            entry(2, payload: #"{"quotes":[{"text":"two","n":2}]}"#, warnings: ["item-image-missing"]),
            entry(3, .delete, result: "deleted"),
            entry(4, result: "refused", payload: #"{"quotes":[]}"#),
            entry(5, group: "other", payload: #"{"quotes":[{"text":"two"}]}"#),
        ]
    }

    @Test func criteriaSelectTheEntriesTheyName() throws {
        func matched(_ json: String) throws -> [Int64] {
            JournalVerification(try expect(json), entries: journal).matched.map(\.at)
        }
        #expect(try matched(#"{"group":"g","kind":"publish","result":"published"}"#) == [2, 1])
        #expect(try matched(#"{"payload":{"/quotes/0/text":"two"}}"#) == [5, 2])
        #expect(try matched(#"{"payload":{"/quotes/0":{"n":2,"text":"two"}}}"#) == [2], "objects compare canonically")
        #expect(try matched(#"{"payloadContains":{"/quotes/0/text":"w"}}"#) == [5, 2])
        #expect(try matched(#"{"payloadMatches":{"/quotes/0/text":"^o.e$"}}"#) == [1])
        #expect(try matched(#"{"warnings":{"present":["item-image-missing"]}}"#) == [2])
        #expect(try matched(#"{"kind":"publish","warnings":{"absent":["item-image-missing"]}}"#) == [5, 4, 1])
        #expect(try matched(#"{"since":4}"#) == [5, 4])
    }

    @Test func theCountDecidesAndNearMissesSayWhatDiffered() throws {
        let holds = JournalVerification(
            try expect(#"{"group":"g","result":"published","count":{"exactly":2}}"#), entries: journal)
        #expect(holds.holds && holds.nearMisses.isEmpty)
        let fails = JournalVerification(
            try expect(#"{"group":"g","kind":"publish","payload":{"/quotes/0/text":"three"}}"#), entries: journal)
        #expect(!fails.holds)
        #expect(fails.matched.isEmpty)
        // Three entries miss by one criterion; the newest of them comes first.
        #expect(fails.nearMisses.prefix(3).map(\.entry.at) == [4, 2, 1])
        #expect(fails.nearMisses.first?.differences == ["/quotes/0/text is absent"])
        #expect(fails.nearMisses[1].differences == [#"/quotes/0/text is "two", not "three""#])
        #expect(fails.nearMisses.count <= JournalVerification.maxNearMisses)
        let crowd = (0..<2_000).map { entry(Int64($0), payload: #"{"quotes":[{"text":"n\#($0)"}]}"#) }
        let far = JournalVerification(try expect(#"{"payloadContains":{"/quotes/0/text":"zz"}}"#), entries: crowd)
        #expect(far.nearMisses.map(\.entry.at) == [1_999, 1_998, 1_997, 1_996, 1_995])
        #expect(PayloadPattern.maxTextBytes == 4_096)
        let long = [entry(1, payload: #"{"t":"\#(String(repeating: "a", count: 5_000))"}"#)]
        let tooLong = JournalVerification(try expect(#"{"payloadMatches":{"/t":"^a"}}"#), entries: long)
        #expect(tooLong.nearMisses.first?.differences.first?.contains("longer than 4096 bytes") == true)
        #expect(!JournalVerification(try expect(#"{"count":{"atMost":1}}"#), entries: journal).holds)
        #expect(JournalVerification(try expect(#"{"group":"none","count":{"exactly":0}}"#), entries: journal).holds)
    }

    @Test func everyRefusalNamesItsMember() {
        let cases: [(String, String)] = [
            (#"{"grop":"g"}"#, "grop"), (#"{"kind":"publsh"}"#, "kind"), (#"{"count":{"exactly":-1}}"#, "count"),
            (#"{"count":{"around":2}}"#, "count"), (#"{"payload":{"quotes":1}}"#, "payload"),
            (#"{"payloadMatches":{"/a":"(a)\\1"}}"#, "payloadMatches"),
            (#"{"payloadMatches":{"/a":"(a{9999}){9999}"}}"#, "payloadMatches"),
            (#"{"payloadMatches":{"/a":"(unclosed"}}"#, "payloadMatches"), (#"{"since":"yesterday"}"#, "since"),
            (#"{"warnings":{"present":"x"}}"#, "warnings"), (#"[1]"#, ""),
        ]
        for (json, member) in cases {
            do {
                _ = try expect(json)
                Issue.record("\(json) was accepted")
            } catch let error as ExpectationError {
                #expect(error.member == member, "\(json): \(error)")
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(throws: Never.self) { try PayloadPattern("20[0-9]{2}-(0[1-9]|1[0-2])") }
        #expect(throws: Never.self) { try PayloadPattern("(ab)+[(|]*c{1,250}") }
        #expect(throws: Never.self) { try PayloadPattern("[]a]+[^]b][[:digit:]]{2}.{0,200}x{1,50}") }
        for slow in [
            "(a|aa)*b", "((a{255}){255}){10}", "(a{1,255}){1,20}b", "((ab)*)+", "(a+)+$", "x+++{255}", "(ab){9}{9}",
            // A bracket holding `]` and `)` does not close the group it is in (glibc: 4 GB).
            "((a{255}[[.].])][[.].])]){255}[[.].])]){255}", "(([[:alpha:])]a+)+)",
            // Chains of bounded repeats: glibc took seconds and gigabytes on 4 KiB of text.
            String(repeating: ".{0,255}", count: 8) + "~", String(repeating: "a{0,255}", count: 31) + "c",
            "(abc){255}",
            // glibc reads `{,n}` as `{0,n}`, with n up to 32767: the same bounds, nesting and atoms.
            ".{,2000}~", "(.{,30}){,30}{,30}", ".{,32767}~", "(.{,60}){,60}~", "a{,}{,}",
        ] {
            #expect(throws: ExpectationError.self, "\(slow)") { try PayloadPattern(slow) }
        }
        #expect(throws: ExpectationError.self) {
            try JournalExpectation(json: Array(#"{"warnings":{"absent":["item-image-mising"]}}"#.utf8))
        }
        let many = (0...16).map { #""/p\#($0)":"x""# }.joined(separator: ",")
        #expect(throws: ExpectationError.self) {
            try JournalExpectation(json: Array(#"{"payloadContains":{\#(many)}}"#.utf8))
        }
    }

    @Test func checkingStopsAtItsDeadline() throws {
        let journal = (0..<3).map {
            JournalEntry(at: Int64($0), kind: .publish, result: "published", group: "g", status: 201)
        }
        let expectation = try JournalExpectation(json: Array(#"{"group":"g"}"#.utf8))
        let late = JournalVerification(expectation, entries: journal, deadlineNanos: MonotonicClock.nanos() - 1)
        #expect(late.stoppedEarly && late.checked == 0)
        let inTime = JournalVerification(
            expectation, entries: journal, deadlineNanos: MonotonicClock.nanos() + 60_000_000_000)
        #expect(!inTime.stoppedEarly && inTime.checked == 3 && inTime.matched.count == 3)
    }
}
