import HTTPTransport
import Testing

/// A budget of bytes shared by requests: never past its limit, except for one request alone.
@Suite struct InflightBudgetTests {
    @Test func reservationsStopAtTheLimitAndComeBack() {
        let budget = InflightBudget(limit: 10)
        #expect(budget.reserve(6))
        #expect(!budget.reserve(5), "past the limit")
        #expect(budget.inUse == 6, "a refusal counts nothing")
        budget.release(6)
        #expect(budget.reserve(10))
        #expect(!budget.reserve(.max), "no overflow")
    }

    @Test func aRequestAloneGoesAheadPastTheLimit() {
        let budget = InflightBudget(limit: 10)
        #expect(budget.reserve(4))
        #expect(budget.reserve(20, orAloneHolding: 4), "the only bytes counted are its own")
        #expect(budget.inUse == 24)
        budget.release(24)
        #expect(budget.reserve(4) && budget.reserve(1))
        #expect(!budget.reserve(20, orAloneHolding: 4), "another request holds a byte")
        #expect(budget.inUse == 5)
    }
}
