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

    @Test func aRequestNearlyAloneGoesAheadPastTheLimit() {
        let budget = InflightBudget(limit: 80)
        #expect(budget.nearlyAlone == 10)
        #expect(budget.reserve(30))
        #expect(budget.reserve(200, nearlyAloneHolding: 30), "the only bytes counted are its own")
        #expect(budget.inUse == 230)
        #expect(!budget.reserve(100, nearlyAloneHolding: 0), "never two past the limit together")
        budget.release(230)
        #expect(budget.reserve(30) && budget.reserve(10))
        #expect(budget.reserve(200, nearlyAloneHolding: 30), "beside an eighth of the limit")
        budget.release(200)
        #expect(budget.reserve(1))
        #expect(!budget.reserve(200, nearlyAloneHolding: 30), "beside more than an eighth")
        #expect(budget.inUse == 41)
    }
}
