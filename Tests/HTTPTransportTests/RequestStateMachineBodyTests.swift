import Testing

@testable import HTTPTransport

/// The request state machine without sockets: a body's bytes, its limits and its drain.
@Suite struct RequestStateMachineBodyTests {
    typealias Machine = RequestStateMachine<String>

    private let now = RequestStateMachineTests.now

    /// A chunked body reserves what it brings as it arrives; past the budget its sink is closed
    /// and the rest drained, then refused with a 503.
    @Test func aChunkedBodyReservesAsItGrows() {
        let budget = InflightBudget(limit: 1_000)
        var machine = RequestStateMachineTests.receiving(nil, limit: 10_000, budget: budget)
        #expect(machine.received(400, now: now, budget: budget) == .store)
        #expect(budget.inUse == 400)
        #expect(machine.received(400, now: now, budget: budget) == .store)
        #expect(budget.inUse == 800)
        #expect(machine.received(400, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(budget.inUse == 800, "the refused piece reserves nothing")
        #expect(machine.received(400, now: now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answer(.refusal(.inflightLimit(1_000))))
        budget.release(machine.completed().releaseReserved)
        #expect(budget.inUse == 0)
    }

    /// A body that goes past its limit is cut there: the sink closed, the rest drained, a 413.
    @Test func aBodyPastItsLimitIsRefused() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = RequestStateMachineTests.receiving(nil, limit: 100, budget: budget)
        #expect(machine.received(100, now: now, budget: budget) == .store)
        #expect(machine.received(1, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(machine.endOfData() == .answer(.refusal(.bodyTooLarge(limit: 100))))
        budget.release(machine.completed().releaseReserved)
        #expect(budget.inUse == 0)
    }

    /// A body that sends more than it declared reserves the difference like a chunked one.
    @Test func aBodyLongerThanDeclaredReservesTheRest() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = RequestStateMachineTests.receiving(10, budget: budget)
        #expect(machine.received(15, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 15, reserved: 15)))
        budget.release(machine.completed().releaseReserved)
        #expect(budget.inUse == 0)
    }

    /// A drain stops at `BodyDrain.maxBytes`: the early answer is queued then (and libmicrohttpd
    /// closes the connection after it).
    @Test func aDrainEndsAtItsByteBound() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = Machine()
        _ = machine.receivedHead(RequestStateMachineTests.bodyHead(nil), now: now)
        _ = machine.admitted(.refuse("401"), budget: budget)
        #expect(machine.received(BodyDrain.maxBytes, now: now, budget: budget) == .drop)
        #expect(machine.received(1, now: now, budget: budget) == .answer(.answer("401")))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A drain stops at `BodyDrain.maxNanos` after the head; a discarded body past it is refused
    /// as a body not taken.
    @Test func aDrainEndsAtItsTimeBound() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = Machine()
        _ = machine.receivedHead(RequestStateMachineTests.bodyHead(nil), now: now)
        _ = machine.admitted(.discard, budget: budget)
        #expect(machine.received(1, now: now + BodyDrain.maxNanos, budget: budget) == .drop)
        #expect(
            machine.received(1, now: now + BodyDrain.maxNanos + 1, budget: budget) == .answer(.refusal(.bodyNotTaken)))
    }

    /// A sink that cannot be opened (its storage failed) drains the body and refuses it.
    @Test func aSinkThatFailsDrainsAndRefuses() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = RequestStateMachineTests.receiving(50, budget: budget)
        machine.sinkFailed(.uploadNotStored(reason: "noSpace"))
        #expect(machine.received(50, now: now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answer(.refusal(.uploadNotStored(reason: "noSpace"))))
        #expect(machine.completed().releaseReserved == 50, "the reservation is kept until completion")
    }

    /// A client that goes away mid-body completes the request with its reservation given back.
    @Test func aClientThatLeavesMidBodyGivesItsReservationBack() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = RequestStateMachineTests.receiving(500, budget: budget)
        _ = machine.received(200, now: now, budget: budget)
        budget.release(machine.completed().releaseReserved)
        #expect(budget.inUse == 0)
        #expect(machine.state == .idle)
    }

    /// Byte counts saturate instead of trapping, whatever a client claims to send.
    @Test func byteCountsSaturate() {
        let budget = InflightBudget(limit: Int.max)
        var machine = RequestStateMachineTests.receiving(nil, limit: Int.max, budget: budget)
        #expect(machine.received(Int.max - 1, now: now, budget: budget) == .store)
        #expect(machine.received(Int.max, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: Int.max, received: .max, reserved: .max)))
        var draining = Machine()
        _ = draining.receivedHead(RequestStateMachineTests.bodyHead(nil), now: now)
        _ = draining.admitted(.refuse("401"), budget: budget)
        #expect(draining.received(Int.max, now: now, budget: budget) == .answer(.answer("401")))
    }

    /// The in-flight budget never wraps and refuses what could never fit.
    @Test func theBudgetRefusesWhatCannotFit() {
        let budget = InflightBudget(limit: 100)
        #expect(!budget.reserve(101))
        #expect(budget.reserve(100))
        #expect(!budget.reserve(1))
        budget.release(100)
        #expect(budget.reserve(0) && budget.inUse == 0)
    }
}
