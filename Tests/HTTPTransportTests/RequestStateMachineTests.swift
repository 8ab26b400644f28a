import Testing

@testable import HTTPTransport

/// The request state machine without sockets: heads, admissions and answers. Bodies and their
/// drains are in `RequestStateMachineBodyTests`.
@Suite struct RequestStateMachineTests {
    typealias Machine = RequestStateMachine<String>

    static let now: Int64 = 1_000_000_000_000

    /// A head with a body of `length` bytes (nil: chunked).
    static func bodyHead(_ length: Int?, expectsContinue: Bool = false) -> HeadFacts {
        HeadFacts(declaredLength: length, carriesBody: true, expectsContinue: expectsContinue)
    }

    /// A machine that has admitted a body of `length` bytes up to `limit`.
    static func receiving(_ length: Int?, limit: Int = 1_000, budget: InflightBudget) -> Machine {
        var machine = Machine()
        _ = machine.receivedHead(bodyHead(length), now: now)
        _ = machine.admitted(.accept(limit: limit), budget: budget)
        return machine
    }

    /// A bodyless head waits for its answering call, which asks for an answer without a body;
    /// the queued answer ends at completion with nothing to undo, and the machine is idle again.
    @Test func aReadWaitsForItsAnsweringCall() {
        var machine = Machine()
        #expect(machine.receivedHead(HeadFacts(), now: Self.now) == .awaitAnswer)
        #expect(machine.state == .bodyless)
        #expect(machine.startNanos == 0, "a read never reads the clock")
        #expect(machine.endOfData() == .answerWithoutBody)
        #expect(machine.state == .handling(reserved: 0))
        machine.answered(.queued(corked: false))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(machine.completed() == .init())
        #expect(machine.state == .idle)
    }

    /// A keep-alive connection's machine serves one request after another.
    @Test func theMachineIsReusedAfterCompletion() {
        var machine = Machine()
        for _ in 0..<3 {
            #expect(machine.receivedHead(HeadFacts(), now: Self.now) == .awaitAnswer)
            #expect(machine.endOfData() == .answerWithoutBody)
            machine.answered(.queued(corked: true))
            #expect(machine.completed() == .init(uncork: true))
        }
        #expect(machine.illegalEvents == 0)
    }

    /// A new request during a shutdown is refused from its head, as not started.
    @Test func aHeadDuringShutdownIsRefusedAtOnce() {
        var machine = Machine()
        #expect(
            machine.receivedHead(HeadFacts(shuttingDown: true), now: Self.now)
                == .answer(.refusal(.shuttingDown(started: false))))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
    }

    /// Framing a proxy could read differently is refused from the head, body or not.
    @Test(arguments: [
        TransportRefusal.ambiguousFraming(.differentLengths), .ambiguousFraming(.lengthAndCoding),
        .ambiguousFraming(.folded), .unsupportedTransferCoding("gzip"),
    ])
    func ambiguousFramingIsRefusedFromTheHead(_ refusal: TransportRefusal) {
        var machine = Machine()
        let head = HeadFacts(framingRefusal: refusal, declaredLength: 10, carriesBody: true)
        #expect(machine.receivedHead(head, now: Self.now) == .answer(.refusal(refusal)))
        #expect(machine.state == .answered(.init(corked: false, reserved: 0)))
        #expect(refusal.closesConnection)
    }

    /// A head with a body asks for admission, with its declared length.
    @Test func aBodyIsJudgedFromItsHead() {
        var machine = Machine()
        #expect(machine.receivedHead(Self.bodyHead(42), now: Self.now) == .admit(declaredLength: 42))
        #expect(machine.state == .admitting(.init(declaredLength: 42, expectsContinue: false)))
        #expect(machine.startNanos == Self.now)
        var chunked = Machine()
        #expect(chunked.receivedHead(Self.bodyHead(nil), now: Self.now) == .admit(declaredLength: nil))
    }

    /// A refusal is answered at once to a client waiting for `100 Continue`, or when the body is
    /// too large to drain; otherwise the body is drained first, then the refusal answered.
    @Test func aRefusedBodyIsAnsweredAtOnceOrAfterItsDrain() {
        let budget = InflightBudget(limit: 1 << 30)
        var waiting = Machine()
        _ = waiting.receivedHead(Self.bodyHead(100, expectsContinue: true), now: Self.now)
        #expect(waiting.admitted(.refuse("401"), budget: budget) == .answer(.answer("401")))
        var huge = Machine()
        _ = huge.receivedHead(Self.bodyHead(BodyDrain.maxBytes + 1), now: Self.now)
        #expect(huge.admitted(.refuse("401"), budget: budget) == .answer(.answer("401")))
        var sending = Machine()
        _ = sending.receivedHead(Self.bodyHead(100), now: Self.now)
        #expect(sending.admitted(.refuse("401"), budget: budget) == .drain)
        #expect(sending.state == .draining(.init(outcome: .early(.answer("401")), dropped: 0, reserved: 0)))
        #expect(sending.received(100, now: Self.now, budget: budget) == .drop)
        #expect(sending.endOfData() == .answer(.answer("401")))
        #expect(budget.inUse == 0)
    }

    /// A body where the route takes none is drained and the request answered as bodyless; one
    /// declared larger than a drain is refused from its head.
    @Test func aBodyTheRouteDoesNotTakeIsDropped() {
        let budget = InflightBudget(limit: 1 << 30)
        var machine = Machine()
        _ = machine.receivedHead(Self.bodyHead(10), now: Self.now)
        #expect(machine.admitted(.discard, budget: budget) == .drain)
        #expect(machine.received(10, now: Self.now, budget: budget) == .drop)
        #expect(machine.endOfData() == .answerWithoutBody)
        var huge = Machine()
        _ = huge.receivedHead(Self.bodyHead(BodyDrain.maxBytes + 1), now: Self.now)
        #expect(huge.admitted(.discard, budget: budget) == .answer(.refusal(.bodyNotTaken)))
    }

    /// A declared length over the route's limit is a 413 from the head.
    @Test func aDeclaredLengthOverTheLimitIsRefused() {
        var machine = Machine()
        _ = machine.receivedHead(Self.bodyHead(2_000), now: Self.now)
        #expect(machine.admitted(.accept(limit: 1_000), budget: InflightBudget(limit: 1 << 30)) == .drain)
        #expect(
            machine.state
                == .draining(.init(outcome: .early(.refusal(.bodyTooLarge(limit: 1_000))), dropped: 0, reserved: 0)))
    }

    /// An admitted body reserves its declared length, and gives it back at completion.
    @Test func anAdmittedBodyHoldsItsReservationUntilCompletion() {
        let budget = InflightBudget(limit: 10_000)
        var machine = Self.receiving(600, budget: budget)
        #expect(machine.state == .receiving(.init(limit: 1_000, received: 0, reserved: 600)))
        #expect(budget.inUse == 600)
        #expect(machine.received(600, now: Self.now, budget: budget) == .store)
        #expect(machine.endOfData() == .answerWithBody)
        machine.answered(.queued(corked: false))
        let completion = machine.completed()
        #expect(completion.releaseReserved == 600)
        budget.release(completion.releaseReserved)
        #expect(budget.inUse == 0)
    }

    /// A body that does not fit the in-flight budget is a 503 from its head.
    @Test func aBodyOverTheInflightBudgetIsRefused() {
        let budget = InflightBudget(limit: 500)
        var machine = Machine()
        _ = machine.receivedHead(Self.bodyHead(600), now: Self.now)
        #expect(machine.admitted(.accept(limit: 1_000), budget: budget) == .drain)
        #expect(
            machine.state == .draining(.init(outcome: .early(.refusal(.inflightLimit(500))), dropped: 0, reserved: 0)))
        #expect(budget.inUse == 0)
    }

    /// A parked request is asked again when woken; a deferred one has its answer queued.
    @Test func parkedAndDeferredRequestsResume() {
        var parked = Machine()
        _ = parked.receivedHead(HeadFacts(), now: Self.now)
        _ = parked.endOfData()
        parked.answered(.parked)
        #expect(parked.state == .parked(reserved: 0))
        #expect(parked.endOfData() == .askAgain)
        #expect(parked.state == .handling(reserved: 0))
        var deferred = Machine()
        _ = deferred.receivedHead(HeadFacts(), now: Self.now)
        _ = deferred.endOfData()
        deferred.answered(.deferred)
        #expect(deferred.endOfData() == .queueDeferred)
        deferred.answered(.queued(corked: false))
        #expect(deferred.completed() == .init())
    }

    /// A client that leaves while its request is parked or deferred completes it without another
    /// handler call: the suspension is forgotten and the reservation given back.
    @Test func aClientThatLeavesWhileSuspendedCompletesCleanly() {
        let budget = InflightBudget(limit: 10_000)
        var machine = Self.receiving(300, budget: budget)
        _ = machine.received(300, now: Self.now, budget: budget)
        _ = machine.endOfData()
        machine.answered(.deferred)
        #expect(machine.completed() == .init(uncork: false, releaseReserved: 300, wasSuspended: true))
        #expect(machine.state == .idle)
    }

    /// Events that do not fit the state are refused with `close` and leave the state alone.
    @Test func eventsOutOfOrderClose() {
        let budget = InflightBudget(limit: 10_000)
        var machine = Machine()
        #expect(machine.endOfData() == .close, "no head yet")
        #expect(machine.received(1, now: Self.now, budget: budget) == .close, "a body before its head")
        #expect(machine.admitted(.discard, budget: budget) == .close, "an admission nobody asked for")
        #expect(machine.state == .idle)
        _ = machine.receivedHead(HeadFacts(), now: Self.now)
        #expect(machine.receivedHead(HeadFacts(), now: Self.now) == .close, "a second head")
        #expect(machine.received(1, now: Self.now, budget: budget) == .close, "a body for a bodyless request")
        #expect(machine.state == .bodyless)
        _ = machine.endOfData()
        machine.answered(.queued(corked: false))
        #expect(machine.endOfData() == .close, "data after the answer")
        #expect(machine.illegalEvents == 6)
        var admitting = Machine()
        _ = admitting.receivedHead(Self.bodyHead(5), now: Self.now)
        #expect(admitting.endOfData() == .close, "the end of a body not admitted yet")
        #expect(admitting.state == .admitting(.init(declaredLength: 5, expectsContinue: false)))
    }
}
