import Testing

@testable import FeedStore

/// WidgetKit's reload budget as modelled, and what a profile counts as a visible change.
@Suite struct ReloadLedgerTests {
    private let hour: Int64 = 3_600_000

    private func published(_ at: Int64, _ id: String, visible: Bool? = nil, group: String = "g") -> JournalEntry {
        var entry = JournalEntry(at: at, kind: .publish, result: "published", group: group, status: 201)
        entry.generationId = id
        entry.visible = visible
        return entry
    }

    @Test func reloadsPastTheBudgetInAnyRolling24HoursAreDropped() {
        // Five publishes an hour apart with a budget of three, then one a day after the first.
        var entries = (0..<5).map { published(Int64($0) * hour, "g\($0)") }
        entries.append(published(24 * hour + 1, "g5"))
        entries.append(JournalEntry(at: hour, kind: .publish, result: "unchanged", group: "g", status: 200))
        entries.append(published(2 * hour, "other", group: "h"))
        let ledger = ReloadLedger(entries: entries, group: "g", budget: 3, since: 0, now: 25 * hour)
        #expect(ledger.publishes.map(\.ios) == [.reloaded, .reloaded, .reloaded, .overBudget, .overBudget, .reloaded])
        #expect(ledger.publishes.map(\.generationId) == ["g0", "g1", "g2", "g3", "g4", "g5"])
        // From the first dropped reload until the budget let g5 through, the widget showed g2.
        #expect(ledger.staleSpans == [.init(from: 3 * hour, to: 24 * hour + 1, showing: "g2", missed: "g4")])
        #expect(ledger.reloadsInWindow == 2, "g0 and g1 left the window; g2 and g5 are in it")
    }

    @Test func aSpanStillOpenEndsNowAndSpansAreCutToTheWindowAsked() {
        let entries = (0..<4).map { published(Int64($0) * hour, "g\($0)", visible: $0 != 3) }
        let ledger = ReloadLedger(entries: entries, group: "g", budget: 2, since: 2 * hour + 30, now: 10 * hour)
        #expect(ledger.publishes.map(\.at) == [3 * hour], "only publishes since 'since' are listed")
        #expect(ledger.publishes.first?.visible == false)
        #expect(ledger.staleSpans == [.init(from: 2 * hour + 30, to: 10 * hour, showing: "g1", missed: "g3")])
    }

    @Test func aProfileDecidesWhatIsAVisibleChange() throws {
        func side(_ json: String, _ digests: [String: String] = [:]) throws -> VisibleChange.Side {
            .init(payload: try JSONDocument.parse(Array(json.utf8)).root, digests: digests)
        }
        let profile = try WidgetProfile(
            json: Array(#"{"items":"/q","title":"/t","image":"{id}.jpg","empty":"/e"}"#.utf8))
        let base = try side(#"{"q":[{"id":"a","t":"A"}],"e":"none","stamp":1}"#, ["a.jpg": "1"])
        func visible(_ other: VisibleChange.Side) -> Bool {
            VisibleChange.isVisible(profile: profile, old: base, new: other)
        }
        #expect(!visible(try side(#"{"q":[{"id":"a","t":"A","x":2}],"e":"none","stamp":2}"#, ["a.jpg": "1"])))
        #expect(visible(try side(#"{"q":[{"id":"a","t":"B"}],"e":"none"}"#, ["a.jpg": "1"])), "a title")
        #expect(visible(try side(#"{"q":[{"id":"a","t":"A"}],"e":"none"}"#, ["a.jpg": "2"])), "the photo's bytes")
        #expect(
            visible(try side(#"{"q":[{"id":"a","t":"A"},{"id":"a","t":"A"}],"e":"none"}"#, ["a.jpg": "1"])), "a count")
        #expect(visible(try side(#"{"q":[{"id":"a","t":"A"}],"e":"empty"}"#, ["a.jpg": "1"])), "the empty state")
    }
}
