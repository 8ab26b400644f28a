import Testing

@testable import HTTPTransport

typealias TestMachine = RequestStateMachine<String>

/// Requests brought to a given state, shared by the state machine's suites.
enum MachineFixture {
    static let now: Int64 = 1_000_000_000_000

    /// A head with a body of `length` bytes (nil: chunked).
    static func bodyHead(_ length: Int?, expectsContinue: Bool = false) -> HeadFacts {
        HeadFacts(declaredLength: length, carriesBody: true, expectsContinue: expectsContinue)
    }

    /// A machine judging the head of a body of `length` bytes.
    static func admitting(_ length: Int?, expectsContinue: Bool = false) -> TestMachine {
        var machine = TestMachine()
        #expect(
            machine.receivedHead(bodyHead(length, expectsContinue: expectsContinue), now: now)
                == .admit(declaredLength: length))
        return machine
    }

    /// A machine receiving a body of `length` bytes, accepted up to `limit`.
    static func receiving(_ length: Int?, limit: Int = 1_000, budget: InflightBudget) -> TestMachine {
        var machine = admitting(length)
        #expect(machine.admitted(.accept(limit: limit), budget: budget) == .receive)
        return machine
    }

    /// A machine draining a body of `length` bytes after `admission`.
    static func draining(_ length: Int?, _ admission: TestMachine.Admission, budget: InflightBudget) -> TestMachine {
        var machine = admitting(length)
        #expect(machine.admitted(admission, budget: budget) == .drain)
        return machine
    }

    /// A machine asking the handler for a bodyless request.
    static func handling() -> TestMachine {
        var machine = TestMachine()
        #expect(machine.receivedHead(HeadFacts(), now: now) == .awaitAnswer)
        #expect(machine.endOfData() == .answerWithoutBody)
        return machine
    }

    /// Completes the request and gives its reservation back, as the completion callback does.
    static func complete(_ machine: inout TestMachine, _ budget: InflightBudget) -> TestMachine.Completion {
        let completion = machine.completed()
        budget.release(completion.releaseReserved)
        #expect(machine.state == .idle)
        #expect(machine.startNanos == 0)
        return completion
    }
}

/// The request state machine without sockets: heads, admissions, answers and completions.
/// Bodies, drains and events out of order are in `RequestStateMachineBodyTests`.
@Suite struct RequestStateMachineTests {
    let now = MachineFixture.now
    let budget = InflightBudget(limit: 1 << 30)

    // MARK: Heads

    /// A bodyless head waits for its answering call; the queued answer leaves nothing to undo.
    @Test func aBodylessRequestIsAnsweredOnItsNextCall() {
        var machine = TestMachine()
        #expect(machine.receivedHead(HeadFacts(), now: now) == .awaitAnswer)
        #expect(machine.state == .bodyless)
        #expect(machine.startNanos == 0, "a bodyless request never reads the clock")
        #expect(machine.endOfData() == .answerWithoutBody)
        #expect(machine.state == .handling(reserved: 0))
        machine.answered(.queued(corked: false))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(MachineFixture.complete(&machine, budget) == .init())
        #expect(machine.illegalEvents == 0)
    }

    /// A head during a shutdown is refused as not started, with or without a body, before its framing.
    @Test(arguments: [
        HeadFacts(shuttingDown: true),
        HeadFacts(declaredLength: 10, carriesBody: true, shuttingDown: true),
        HeadFacts(framingRefusal: .ambiguousFraming(.folded), shuttingDown: true),
    ])
    func aHeadDuringShutdownIsRefusedAsNotStarted(_ head: HeadFacts) {
        var machine = TestMachine()
        #expect(machine.receivedHead(head, now: now) == .answer(.refusal(.shuttingDown(started: false))))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(MachineFixture.complete(&machine, budget) == .init())
    }

    /// A query the shim emptied (too many arguments) is refused from the head, with or without a body.
    @Test(arguments: [
        HeadFacts(queryRefused: true), HeadFacts(declaredLength: 10, carriesBody: true, queryRefused: true),
    ])
    func aRefusedQueryIsAnsweredFromTheHead(_ head: HeadFacts) {
        var machine = TestMachine()
        let refusal = TransportRefusal.queryTooLong(maxArguments: HeadFacts.maxQueryArguments)
        #expect(machine.receivedHead(head, now: now) == .answer(.refusal(refusal)))
        #expect(refusal.closesConnection, "the body, if any, is not read")
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(MachineFixture.complete(&machine, budget) == .init())
    }

    /// Framing a proxy could read differently is answered on the head: its body is neither read nor drained.
    @Test(arguments: [
        TransportRefusal.ambiguousFraming(.differentLengths), .ambiguousFraming(.lengthAndCoding),
        .ambiguousFraming(.folded), .unsupportedTransferCoding("gzip"),
    ])
    func untrustedFramingIsRefusedFromTheHead(_ refusal: TransportRefusal) {
        var machine = TestMachine()
        let head = HeadFacts(framingRefusal: refusal, declaredLength: 10, carriesBody: true)
        #expect(machine.receivedHead(head, now: now) == .answer(.refusal(refusal)))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(machine.received(10, now: now, budget: budget) == .close, "no body is taken after it")
        #expect(MachineFixture.complete(&machine, budget) == .init())
    }

    /// A head with a body asks for admission with its declared length, and starts the drain's clock.
    @Test(arguments: [42, nil] as [Int?], [false, true])
    func aHeadWithABodyAsksForAdmission(_ length: Int?, expectsContinue: Bool) {
        var machine = TestMachine()
        let head = MachineFixture.bodyHead(length, expectsContinue: expectsContinue)
        #expect(machine.receivedHead(head, now: now) == .admit(declaredLength: length))
        #expect(machine.state == .admitting(.init(declaredLength: length, expectsContinue: expectsContinue)))
        #expect(machine.startNanos == now)
    }

    // MARK: Admission

    /// A refusal to a client waiting for `100 Continue` is answered at once: no body is coming.
    @Test(arguments: [100, nil] as [Int?])
    func aRefusalToAContinueClientIsAnsweredAtOnce(_ length: Int?) {
        var machine = MachineFixture.admitting(length, expectsContinue: true)
        #expect(machine.admitted(.refuse("401"), budget: budget) == .answer(.answer("401")))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A refusal of a body declared larger than a drain is answered at once.
    @Test func aRefusalOfABodyTooLargeToDrainIsAnsweredAtOnce() {
        var machine = MachineFixture.admitting(BodyDrain.maxBytes + 1)
        #expect(machine.admitted(.refuse("401"), budget: budget) == .answer(.answer("401")))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// Otherwise a refusal drains the body first (up to `BodyDrain.maxBytes`), then is answered.
    @Test(arguments: [100, BodyDrain.maxBytes, nil] as [Int?])
    func aRefusalIsAnsweredAfterTheBodyIsDrained(_ length: Int?) {
        var machine = MachineFixture.draining(length, .refuse("401"), budget: budget)
        #expect(machine.state == .draining(.init(outcome: .early(.answer("401")), dropped: 0, reserved: 0)))
        #expect(machine.received(100, now: now, budget: budget) == .drop)
        #expect(machine.state == .draining(.init(outcome: .early(.answer("401")), dropped: 100, reserved: 0)))
        #expect(machine.endOfData() == .answer(.answer("401")))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(MachineFixture.complete(&machine, budget) == .init())
    }

    /// A body the route does not take is drained, then the request is answered as bodyless.
    @Test(arguments: [false, true])
    func aDiscardedBodyIsDrainedThenAnsweredWithoutIt(expectsContinue: Bool) {
        var machine = MachineFixture.admitting(10, expectsContinue: expectsContinue)
        #expect(machine.admitted(.discard, budget: budget) == .drain)
        #expect(machine.state == .draining(.init(outcome: .handleAtEnd, dropped: 0, reserved: 0)))
        #expect(machine.received(10, now: now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answerWithoutBody)
        #expect(machine.state == .handling(reserved: 0))
        machine.answered(.queued(corked: false))
        #expect(MachineFixture.complete(&machine, budget) == .init())
    }

    /// A discarded body declared larger than a drain is refused as not taken, at once.
    @Test func aDiscardedBodyTooLargeToDrainIsNotTaken() {
        var machine = MachineFixture.admitting(BodyDrain.maxBytes + 1)
        #expect(machine.admitted(.discard, budget: budget) == .answer(.refusal(.bodyNotTaken)))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// A declared length over the limit is too large, after a drain or at once (`100 Continue`), reserving nothing.
    @Test func aDeclaredLengthOverTheLimitIsTooLarge() {
        let early = TestMachine.Early.refusal(.bodyTooLarge(limit: 1_000))
        var sending = MachineFixture.admitting(1_001)
        #expect(sending.admitted(.accept(limit: 1_000), budget: budget) == .drain)
        #expect(sending.state == .draining(.init(outcome: .early(early), dropped: 0, reserved: 0)))
        var waiting = MachineFixture.admitting(1_001, expectsContinue: true)
        #expect(waiting.admitted(.accept(limit: 1_000), budget: budget) == .answer(early))
        #expect(waiting.state == .answered(.init(corked: false, reserved: 0)))
        #expect(budget.inUse == 0)
    }

    /// A body that does not fit what is left of the in-flight budget is refused, reserving nothing.
    @Test func aBodyOverTheInflightBudgetIsRefused() {
        let budget = InflightBudget(limit: 1_000)
        #expect(budget.reserve(500), "another request's body")
        let early = TestMachine.Early.refusal(.inflightLimit(1_000))
        var sending = MachineFixture.admitting(600)
        #expect(sending.admitted(.accept(limit: 1_000), budget: budget) == .drain)
        #expect(sending.state == .draining(.init(outcome: .early(early), dropped: 0, reserved: 0)))
        var waiting = MachineFixture.admitting(600, expectsContinue: true)
        #expect(waiting.admitted(.accept(limit: 1_000), budget: budget) == .answer(early))
        #expect(budget.inUse == 500)
        _ = MachineFixture.complete(&sending, budget)
        _ = MachineFixture.complete(&waiting, budget)
        #expect(budget.inUse == 500, "the refused bodies give back nothing they did not take")
    }

    /// An accepted body reserves its declared length (a chunked one nothing yet).
    @Test(arguments: [(600, 600), (1_000, 1_000), (nil, 0)] as [(Int?, Int)])
    func anAcceptedBodyReservesItsDeclaredLength(_ length: Int?, reserved: Int) {
        var machine = MachineFixture.admitting(length)
        #expect(machine.admitted(.accept(limit: 1_000), budget: budget) == .receive)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 0, reserved: reserved)))
        #expect(budget.inUse == reserved)
        _ = MachineFixture.complete(&machine, budget)
        #expect(budget.inUse == 0)
    }

    /// A received body is answered with it; its reservation is held until completion.
    @Test func aReceivedBodyIsAnsweredWithItAndGivenBackAtCompletion() {
        var machine = MachineFixture.receiving(600, budget: budget)
        #expect(machine.received(600, now: now, budget: budget) == .store)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 600, reserved: 600)))
        #expect(machine.endOfData() == .answerWithBody)
        #expect(machine.state == .handling(reserved: 600))
        machine.answered(.queued(corked: false))
        #expect(machine.state == .answered(.init(corked: false, reserved: 600)))
        #expect(budget.inUse == 600)
        #expect(MachineFixture.complete(&machine, budget) == .init(releaseReserved: 600))
        #expect(budget.inUse == 0)
    }

    // MARK: Suspension

    /// A parked request is asked again when woken, and may park again.
    @Test func aParkedRequestIsAskedAgainWhenWoken() {
        var machine = MachineFixture.handling()
        machine.answered(.parked)
        #expect(machine.state == .parked(reserved: 0))
        #expect(machine.endOfData() == .askAgain)
        #expect(machine.state == .handling(reserved: 0))
        machine.answered(.parked)
        #expect(machine.state == .parked(reserved: 0))
        #expect(machine.endOfData() == .askAgain)
        machine.answered(.queued(corked: false))
        #expect(MachineFixture.complete(&machine, budget) == .init(), "answered, it is no longer suspended")
    }

    /// A deferred request queues the work pool's answer when resumed.
    @Test func aDeferredRequestQueuesThePoolsAnswer() {
        var machine = MachineFixture.handling()
        machine.answered(.deferred)
        #expect(machine.state == .deferred(reserved: 0))
        #expect(machine.endOfData() == .queueDeferred)
        #expect(machine.state == .handling(reserved: 0))
        machine.answered(.queued(corked: true))
        #expect(MachineFixture.complete(&machine, budget) == .init(uncork: true))
    }

    /// A body's reservation is held through a suspension and given back at completion.
    @Test(arguments: [TestMachine.Outcome.parked, .deferred])
    func aSuspendedRequestKeepsItsBodysReservation(_ outcome: TestMachine.Outcome) {
        var machine = MachineFixture.receiving(300, budget: budget)
        _ = machine.received(300, now: now, budget: budget)
        _ = machine.endOfData()
        machine.answered(outcome)
        #expect(machine.state == (outcome == .parked ? .parked(reserved: 300) : .deferred(reserved: 300)))
        #expect(machine.endOfData() == (outcome == .parked ? .askAgain : .queueDeferred))
        #expect(machine.state == .handling(reserved: 300))
        machine.answered(.queued(corked: false))
        #expect(MachineFixture.complete(&machine, budget) == .init(releaseReserved: 300))
        #expect(budget.inUse == 0)
    }

    /// A client that leaves while suspended completes the request: suspension forgotten, reservation given back.
    @Test(arguments: [TestMachine.Outcome.parked, .deferred])
    func aClientThatLeavesWhileSuspendedIsForgotten(_ outcome: TestMachine.Outcome) {
        var machine = MachineFixture.receiving(300, budget: budget)
        _ = machine.received(300, now: now, budget: budget)
        _ = machine.endOfData()
        machine.answered(outcome)
        let ended = MachineFixture.complete(&machine, budget)
        #expect(ended == .init(releaseReserved: 300, wasSuspended: true, abandoned: outcome == .parked))
        #expect(budget.inUse == 0)
    }

    // MARK: Completion

    /// Completion uncorks only an answer queued corked.
    @Test(arguments: [false, true])
    func completionUncorksOnlyACorkedAnswer(corked: Bool) {
        var machine = MachineFixture.handling()
        machine.answered(.queued(corked: corked))
        #expect(machine.state == .answered(.init(corked: corked, reserved: 0)))
        #expect(MachineFixture.complete(&machine, budget) == .init(uncork: corked))
    }

    /// A request ended before its answer (client gone, queueing failed) gives back only its reservation.
    @Test func aRequestEndedBeforeItsAnswerGivesBackOnlyItsReservation() {
        var head = TestMachine()
        _ = head.receivedHead(HeadFacts(), now: now)
        #expect(MachineFixture.complete(&head, budget) == .init(abandoned: true))
        var admitting = MachineFixture.admitting(100)
        #expect(MachineFixture.complete(&admitting, budget) == .init(abandoned: true))
        var handling = MachineFixture.receiving(100, budget: budget)
        _ = handling.received(100, now: now, budget: budget)
        _ = handling.endOfData()
        #expect(MachineFixture.complete(&handling, budget) == .init(releaseReserved: 100, abandoned: true))
        var idle = TestMachine()
        #expect(MachineFixture.complete(&idle, budget) == .init())
        #expect(budget.inUse == 0)
    }

    /// An answer reported outside handling (or a queued answer) changes nothing.
    @Test func anAnswerOutsideHandlingChangesNothing() {
        var machine = MachineFixture.receiving(100, budget: budget)
        machine.answered(.queued(corked: true))
        machine.answered(.parked)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 0, reserved: 100)))
        var idle = TestMachine()
        idle.answered(.deferred)
        #expect(idle.state == .idle)
        _ = MachineFixture.complete(&machine, budget)
    }

    /// A keep-alive connection's machine serves one request after another, each with its own clock.
    @Test func theMachineServesRequestsOneAfterAnother() {
        var machine = MachineFixture.receiving(100, budget: budget)
        _ = machine.received(100, now: now, budget: budget)
        _ = machine.endOfData()
        machine.answered(.queued(corked: true))
        #expect(MachineFixture.complete(&machine, budget) == .init(uncork: true, releaseReserved: 100))
        #expect(machine.receivedHead(HeadFacts(), now: now) == .awaitAnswer)
        #expect(machine.endOfData() == .answerWithoutBody)
        machine.answered(.queued(corked: false))
        #expect(MachineFixture.complete(&machine, budget) == .init())
        let later = now + 2 * BodyDrain.maxNanos
        #expect(machine.receivedHead(MachineFixture.bodyHead(nil), now: later) == .admit(declaredLength: nil))
        #expect(machine.startNanos == later)
        #expect(machine.admitted(.discard, budget: budget) == .drain)
        #expect(machine.received(1, now: later + BodyDrain.maxNanos, budget: budget) == .drop)
        #expect(machine.illegalEvents == 0)
        #expect(budget.inUse == 0)
    }
}
