import FeedStore
import Testing

/// The memory a publish's parse is counted for before it starts.
@Suite struct JSONMemoryEstimateTests {
    @Test func textCostsThreeTimesItsBytesAndEachValueMore() {
        let text = Array(#"{"title":"a long title with no structure in it at all"}"#.utf8)
        #expect(JSONMemoryEstimate.peakBytes(of: text) == text.count * 3 + 2 * 6, "one `{`, one `:`")
        let dense = Array("[[0],[0],[0]]".utf8)
        #expect(JSONMemoryEstimate.peakBytes(of: dense) == dense.count * 3 + 6 * 6, "four `[`, two `,`")
    }
}
