import Testing

@testable import HTTPTransport

/// The request state machine without sockets: a body's bytes against its limit, the in-flight
/// budget and the drain's bounds; and events that do not fit the state.
@Suite struct RequestStateMachineBodyTests {
    let now = MachineFixture.now

    /// The states events are fed in.
    enum Stage: String, CaseIterable, Sendable {
        case idle, bodyless, admitting, receiving, draining, handling, parked, deferred, answered

        /// A machine in this stage.
        func machine(budget: InflightBudget) -> TestMachine {
            switch self {
            case .idle: return TestMachine()
            case .bodyless:
                var machine = TestMachine()
                _ = machine.receivedHead(HeadFacts(), now: MachineFixture.now)
                return machine
            case .admitting: return MachineFixture.admitting(100)
            case .receiving: return MachineFixture.receiving(100, budget: budget)
            case .draining: return MachineFixture.draining(100, .refuse("401"), budget: budget)
            case .handling: return MachineFixture.handling()
            case .parked, .deferred, .answered:
                var machine = MachineFixture.handling()
                let outcome: TestMachine.Outcome =
                    switch self {
                    case .parked: .parked
                    case .deferred: .deferred
                    default: .queued(corked: false)
                    }
                machine.answered(outcome)
                return machine
            }
        }
    }

    // MARK: Receiving

    /// A chunked body reserves what it brings as it arrives.
    @Test func aChunkedBodyReservesWhatArrives() {
        let budget = InflightBudget(limit: 1_000)
        var machine = MachineFixture.receiving(nil, limit: 10_000, budget: budget)
        #expect(machine.received(400, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: 10_000, received: 400, reserved: 400)))
        #expect(machine.received(600, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: 10_000, received: 1_000, reserved: 1_000)))
        #expect(budget.inUse == 1_000)
        #expect(machine.endOfData() == .answerWithBody)
        #expect(machine.state == .handling(reserved: 1_000))
        _ = MachineFixture.complete(&machine, budget)
        #expect(budget.inUse == 0)
    }

    /// A body longer than it declared reserves the difference, like a chunked one.
    @Test func aBodyLongerThanDeclaredReservesTheDifference() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = MachineFixture.receiving(10, budget: budget)
        #expect(machine.received(15, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 15, reserved: 15)))
        #expect(budget.inUse == 15)
        _ = MachineFixture.complete(&machine, budget)
        #expect(budget.inUse == 0)
    }

    /// A body growing past the budget closes its sink; the rest is drained, then refused with a 503.
    @Test func aBodyPastTheBudgetIsDrainedThenRefused() {
        let budget = InflightBudget(limit: 1_000)
        let early = TestMachine.Early.refusal(.inflightLimit(1_000))
        var machine = MachineFixture.receiving(nil, limit: 10_000, budget: budget)
        #expect(machine.received(800, now: now, budget: budget) == .store)
        #expect(machine.received(400, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(machine.state == .draining(.init(outcome: .early(early), dropped: 0, reserved: 800)))
        #expect(budget.inUse == 800, "the refused piece reserves nothing")
        #expect(machine.received(400, now: now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answer(early))
        #expect(machine.state == .answered(.init(corked: false, reserved: 800)))
        #expect(MachineFixture.complete(&machine, budget) == .init(releaseReserved: 800))
        #expect(budget.inUse == 0)
    }

    /// A body at its limit is stored; one byte past it closes the sink and is a 413 after the drain.
    @Test func aBodyPastItsLimitIsDrainedThenTooLarge() {
        let budget = InflightBudget(limit: 1 << 30)
        let early = TestMachine.Early.refusal(.bodyTooLarge(limit: 100))
        var machine = MachineFixture.receiving(nil, limit: 100, budget: budget)
        #expect(machine.received(100, now: now, budget: budget) == .store)
        #expect(machine.received(1, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(machine.state == .draining(.init(outcome: .early(early), dropped: 0, reserved: 100)))
        #expect(budget.inUse == 100, "bytes past the limit are never kept, so never reserved")
        #expect(machine.endOfData() == .answer(early))
        _ = MachineFixture.complete(&machine, budget)
        #expect(budget.inUse == 0)
    }

    /// A body past its limit is too large whatever the budget, as at admission.
    @Test func aBodyPastItsLimitAndTheBudgetIsTooLarge() {
        let budget = InflightBudget(limit: 500)
        var machine = MachineFixture.receiving(nil, limit: 1_000, budget: budget)
        #expect(machine.received(2_000, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(machine.endOfData() == .answer(.refusal(.bodyTooLarge(limit: 1_000))))
        #expect(budget.inUse == 0)
    }

    /// A sink that cannot be opened drains the body, then refuses it, its reservation kept until completion.
    @Test func aSinkThatCannotBeOpenedDrainsThenRefuses() {
        let budget = InflightBudget(limit: 1 << 30)
        let early = TestMachine.Early.refusal(.uploadNotStored(reason: "noSpace"))
        var machine = MachineFixture.receiving(50, budget: budget)
        machine.sinkFailed(.uploadNotStored(reason: "noSpace"))
        #expect(machine.state == .draining(.init(outcome: .early(early), dropped: 0, reserved: 50)))
        #expect(machine.received(50, now: now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answer(early))
        #expect(machine.state == .answered(.init(corked: false, reserved: 50)))
        #expect(MachineFixture.complete(&machine, budget) == .init(releaseReserved: 50))
        #expect(budget.inUse == 0)
    }

    /// A sink failure reported outside receiving changes nothing.
    @Test(arguments: [Stage.idle, .admitting, .draining, .handling, .answered])
    func aSinkFailureOutsideReceivingChangesNothing(_ stage: Stage) {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = stage.machine(budget: budget)
        let before = machine.state
        machine.sinkFailed(.uploadNotStored(reason: "noSpace"))
        #expect(machine.state == before)
    }

    /// A client that goes away mid-body, receiving or draining, gives its reservation back.
    @Test func aClientThatLeavesMidBodyGivesItsReservationBack() {
        let budget = InflightBudget(limit: 1_000)
        var receiving = MachineFixture.receiving(500, budget: budget)
        _ = receiving.received(200, now: now, budget: budget)
        var draining = MachineFixture.receiving(nil, budget: budget)
        _ = draining.received(300, now: now, budget: budget)
        #expect(draining.received(300, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(budget.inUse == 800)
        #expect(MachineFixture.complete(&receiving, budget) == .init(releaseReserved: 500, abandoned: true))
        #expect(MachineFixture.complete(&draining, budget) == .init(releaseReserved: 300, abandoned: true))
        #expect(budget.inUse == 0)
    }

    // MARK: Drain bounds

    /// A drain past `BodyDrain.maxBytes` answers at once: the early answer, or a body not taken.
    @Test(arguments: [false, true])
    func aDrainPastItsByteBoundAnswersAtOnce(discarded: Bool) {
        let budget = InflightBudget(limit: 1 << 30)
        let early: TestMachine.Early = discarded ? .refusal(.bodyNotTaken) : .answer("401")
        var machine = MachineFixture.draining(nil, discarded ? .discard : .refuse("401"), budget: budget)
        #expect(machine.received(BodyDrain.maxBytes, now: now, budget: budget) == .drop)
        #expect(machine.received(1, now: now, budget: budget) == .answer(early))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A drain past `BodyDrain.maxNanos` after the head answers at once: the early answer, or a body not taken.
    @Test(arguments: [false, true])
    func aDrainPastItsTimeBoundAnswersAtOnce(discarded: Bool) {
        let budget = InflightBudget(limit: 1 << 30)
        let early: TestMachine.Early = discarded ? .refusal(.bodyNotTaken) : .answer("401")
        var machine = MachineFixture.draining(nil, discarded ? .discard : .refuse("401"), budget: budget)
        #expect(machine.received(1, now: now + BodyDrain.maxNanos, budget: budget) == .drop)
        #expect(machine.received(1, now: now + BodyDrain.maxNanos + 1, budget: budget) == .answer(early))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A drain cut at its bound keeps the body's reservation until completion.
    @Test func aDrainCutAtItsBoundKeepsItsReservationUntilCompletion() {
        let budget = InflightBudget(limit: 1_000)
        var machine = MachineFixture.receiving(nil, limit: 10_000, budget: budget)
        _ = machine.received(800, now: now, budget: budget)
        #expect(machine.received(800, now: now, budget: budget) == .closeSinkAndDrop)
        #expect(
            machine.received(BodyDrain.maxBytes + 1, now: now, budget: budget)
                == .answer(.refusal(.inflightLimit(1_000))))
        #expect(machine.state == .answered(.init(corked: false, reserved: 800)))
        machine.answered(.queued(corked: false))
        #expect(MachineFixture.complete(&machine, budget) == .init(releaseReserved: 800))
        #expect(budget.inUse == 0)
    }

    // MARK: Saturation

    /// Received byte counts saturate instead of trapping.
    @Test func receivedCountsSaturate() {
        let budget = InflightBudget(limit: Int.max)
        var machine = MachineFixture.receiving(nil, limit: Int.max, budget: budget)
        #expect(machine.received(Int.max - 1, now: now, budget: budget) == .store)
        #expect(machine.received(Int.max, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: Int.max, received: .max, reserved: .max)))
        _ = MachineFixture.complete(&machine, budget)
        #expect(budget.inUse == 0)
    }

    /// Dropped byte counts saturate instead of trapping, and end the drain.
    @Test func droppedCountsSaturate() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = MachineFixture.draining(nil, .refuse("401"), budget: budget)
        #expect(machine.received(10, now: now, budget: budget) == .drop)
        #expect(machine.received(Int.max, now: now, budget: budget) == .answer(.answer("401")))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A declared length of `Int.max` (as a longer one reads) is judged from the head.
    @Test func anIntMaxLengthIsJudgedFromTheHead() {
        let budget = InflightBudget(limit: Int.max)
        var accepted = MachineFixture.admitting(.max)
        #expect(
            accepted.admitted(.accept(limit: 1 << 20), budget: budget)
                == .answer(.refusal(.bodyTooLarge(limit: 1 << 20))))
        var discarded = MachineFixture.admitting(.max)
        #expect(discarded.admitted(.discard, budget: budget) == .answer(.refusal(.bodyNotTaken)))
        #expect(budget.inUse == 0)
    }

    /// The in-flight budget refuses what could never fit, and counts nothing it refuses.
    @Test func theBudgetRefusesWhatCannotFit() {
        let budget = InflightBudget(limit: 100)
        #expect(!budget.reserve(101))
        #expect(budget.reserve(100))
        #expect(!budget.reserve(1))
        #expect(budget.inUse == 100)
        budget.release(100)
        #expect(budget.reserve(0) && budget.inUse == 0)
    }

    // MARK: Events out of order

    /// Feeds `event` to a machine in `stage`: it must close, count one illegal event, and change nothing.
    private func expectIllegal<Action: Equatable>(
        in stage: Stage, _ close: Action, _ event: (inout TestMachine, InflightBudget) -> Action
    ) {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = stage.machine(budget: budget)
        let (before, startNanos, inUse) = (machine.state, machine.startNanos, budget.inUse)
        #expect(event(&machine, budget) == close)
        #expect(machine.state == before)
        #expect(machine.startNanos == startNanos)
        #expect(budget.inUse == inUse)
        #expect(machine.illegalEvents == 1)
    }

    /// A head while a request is in progress closes.
    @Test(arguments: Stage.allCases.filter { $0 != .idle })
    func aHeadOutsideIdleCloses(_ stage: Stage) {
        expectIllegal(in: stage, TestMachine.HeadAction.close) { machine, _ in
            machine.receivedHead(HeadFacts(), now: MachineFixture.now + 1)
        }
    }

    /// An admission nobody asked for closes, whatever it decides.
    @Test(arguments: Stage.allCases.filter { $0 != .admitting })
    func anAdmissionOutsideAdmittingCloses(_ stage: Stage) {
        for admission: TestMachine.Admission in [.accept(limit: 1_000), .refuse("401"), .discard] {
            expectIllegal(in: stage, TestMachine.AdmitAction.close) { $0.admitted(admission, budget: $1) }
        }
    }

    /// A piece of body outside receiving or draining closes.
    @Test(arguments: Stage.allCases.filter { $0 != .receiving && $0 != .draining })
    func aBodyPieceOutsideABodyCloses(_ stage: Stage) {
        expectIllegal(in: stage, TestMachine.ChunkAction.close) { $0.received(1, now: MachineFixture.now, budget: $1) }
    }

    /// An end of data with nothing to end (no head, a body not admitted, an answer asked or given) closes.
    @Test(arguments: [Stage.idle, .admitting, .handling, .answered])
    func anEndOfDataWithNothingToEndCloses(_ stage: Stage) {
        expectIllegal(in: stage, TestMachine.EndAction.close) { machine, _ in machine.endOfData() }
    }
}
