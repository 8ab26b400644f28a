/// The life of one request on a connection, from its head to its completion, as libmicrohttpd's
/// callbacks report it: each event moves the state and returns the action the daemon takes.
///
/// A value with no resources of its own: the body's sink, the parked request and the socket stay
/// with `ConnectionState`, which performs the actions. Generic over the answer (the daemon's is
/// `HTTPResponse`) so every transition can be tested without sockets or libmicrohttpd.
///
/// The states are the real cases: a request without a body waits for its answering call; a body
/// is either received into a sink up to its limit, or drained (read and dropped within
/// `BodyDrain`'s bounds) because its answer is already decided or the route takes none; a
/// handler's answer is queued at once, or the request is parked (long-poll) or deferred (work
/// pool) until it is resumed. Events that do not fit the state are `.illegal` and close the
/// connection rather than guess.
package struct RequestStateMachine<Answer> {
    /// The current state.
    package private(set) var state: State = .idle
    /// When the request's head arrived, for the drain's time bound (0 for a bodyless request,
    /// whose clock is never read).
    package private(set) var startNanos: Int64 = 0

    /// A machine waiting for its first request.
    package init() {}

    // MARK: Head

    /// What the daemon does with a new head.
    package enum HeadAction {
        /// No body: wait for the next handler call, which answers.
        case awaitAnswer
        /// Answer at once; libmicrohttpd closes the connection after an answer queued on a head.
        case answer(Early)
        /// Ask the responder whether the body is taken (`admitted(_:budget:)`).
        case admit(declaredLength: Int?)
        /// The event does not fit the state: close the connection.
        case close
    }

    /// A request head arrived.
    package mutating func receivedHead(_ head: HeadFacts, now: Int64) -> HeadAction {
        guard case .idle = state else { return illegal(.close) }
        if head.shuttingDown {
            state = .answered(Answered(corked: false, reserved: 0))
            return .answer(.refusal(.shuttingDown(started: false)))
        }
        if head.queryRefused {
            // Its query is gone: answered at once, and closed (the body, if any, is not read).
            state = .answered(Answered(corked: false, reserved: 0))
            return .answer(.refusal(.queryTooLong(maxArguments: HeadFacts.maxQueryArguments)))
        }
        if let refusal = head.framingRefusal {
            // Where the body ends is not known, so it can be neither read nor drained.
            state = .answered(Answered(corked: false, reserved: 0))
            return .answer(.refusal(refusal))
        }
        guard head.carriesBody else {
            state = .bodyless
            return .awaitAnswer
        }
        startNanos = now
        state = .admitting(Admitting(declaredLength: head.declaredLength, expectsContinue: head.expectsContinue))
        return .admit(declaredLength: head.declaredLength)
    }

    // MARK: Admission

    /// What the responder decided from the head of a request with a body.
    package enum Admission {
        /// Read the body, at most `limit` bytes of it.
        case accept(limit: Int)
        /// Answer with this without keeping the body.
        case refuse(Answer)
        /// The route takes no body: drop it, then answer as usual.
        case discard
    }

    /// What the daemon does after the admission.
    package enum AdmitAction {
        /// Answer now (no body will be read: a `100 Continue` client, or too much to drain).
        case answer(Early)
        /// Read and drop the body; the answer comes at its end.
        case drain
        /// Open the sink and receive the body.
        case receive
        /// The event does not fit the state: close the connection.
        case close
    }

    /// The responder judged the head.
    package mutating func admitted(_ admission: Admission, budget: InflightBudget) -> AdmitAction {
        guard case .admitting(let head) = state else { return illegal(.close) }
        switch admission {
        case .refuse(let answer):
            return refuse(.answer(answer), head: head, reserved: 0)
        case .discard:
            if let length = head.declaredLength, length > BodyDrain.maxBytes {
                return refuse(.refusal(.bodyNotTaken), head: head, reserved: 0)
            }
            state = .draining(Draining(outcome: .handleAtEnd, dropped: 0, reserved: 0))
            return .drain
        case .accept(let limit):
            if let length = head.declaredLength, length > limit {
                return refuse(.refusal(.bodyTooLarge(limit: limit)), head: head, reserved: 0)
            }
            let reserved = head.declaredLength ?? 0
            guard budget.reserve(reserved) else {
                return refuse(.refusal(.inflightLimit(budget.limit)), head: head, reserved: 0)
            }
            state = .receiving(Receiving(limit: limit, received: 0, reserved: reserved))
            return .receive
        }
    }

    /// A refusal decided from the head: answered at once when no body is coming yet (`100
    /// Continue`) or it is too large to drain; otherwise the body is drained first, since a client
    /// that sends its body before reading would see a reset instead of the answer.
    private mutating func refuse(_ early: Early, head: Admitting, reserved: Int) -> AdmitAction {
        if head.expectsContinue || (head.declaredLength ?? 0) > BodyDrain.maxBytes {
            state = .answered(Answered(corked: false, reserved: reserved))
            return .answer(early)
        }
        state = .draining(Draining(outcome: .early(early), dropped: 0, reserved: reserved))
        return .drain
    }

    /// The sink could not be opened (its storage failed) or keep a piece (the memory budget): the
    /// rest of the body is drained, then the request refused.
    package mutating func sinkFailed(_ refusal: TransportRefusal) {
        guard case .receiving(let body) = state else { return }
        state = .draining(Draining(outcome: .early(.refusal(refusal)), dropped: 0, reserved: body.reserved))
    }

    // MARK: Body

    /// What the daemon does with a piece of the body.
    package enum ChunkAction {
        /// Hand it to the sink.
        case store
        /// Drop it.
        case drop
        /// Close the sink (its contents are not wanted), then drop the piece.
        case closeSinkAndDrop
        /// Past the drain's bounds: answer now; libmicrohttpd closes the connection after it.
        case answer(Early)
        /// The event does not fit the state: close the connection.
        case close
    }

    /// `count` body bytes arrived at `now`.
    package mutating func received(_ count: Int, now: Int64, budget: InflightBudget) -> ChunkAction {
        switch state {
        case .receiving(var body):
            let (received, overflow) = body.received.addingReportingOverflow(count)
            body.received = overflow ? .max : received
            // The limit before the budget, as at admission: a body past its limit is a 413 whatever
            // the budget, and the bytes past it are never kept, so never reserved.
            if body.received > body.limit {
                state = .draining(
                    Draining(
                        outcome: .early(.refusal(.bodyTooLarge(limit: body.limit))), dropped: 0, reserved: body.reserved
                    ))
                return .closeSinkAndDrop
            }
            if body.received > body.reserved {
                // A chunked body (or a lying length) needs more of the budget.
                guard budget.reserve(body.received - body.reserved) else {
                    state = .draining(
                        Draining(
                            outcome: .early(.refusal(.inflightLimit(budget.limit))), dropped: 0, reserved: body.reserved
                        ))
                    return .closeSinkAndDrop
                }
                body.reserved = body.received
            }
            state = .receiving(body)
            return .store
        case .draining(var drain):
            let (dropped, overflow) = drain.dropped.addingReportingOverflow(count)
            drain.dropped = overflow ? .max : dropped
            guard BodyDrain.allows(bytes: drain.dropped, elapsedNanos: now - startNanos) else {
                state = .answered(Answered(corked: false, reserved: drain.reserved))
                switch drain.outcome {
                case .early(let early): return .answer(early)
                case .handleAtEnd: return .answer(.refusal(.bodyNotTaken))
                }
            }
            state = .draining(drain)
            return .drop
        default:
            return illegal(.close)
        }
    }

    /// What the daemon does when a request's data has all arrived (the handler's call without data).
    package enum EndAction {
        /// Try a prepared answer, then ask the handler (no body was kept).
        case answerWithoutBody
        /// Finish the sink and ask the handler with the body.
        case answerWithBody
        /// Queue this answer.
        case answer(Early)
        /// The parked request was woken: ask the handler again.
        case askAgain
        /// The work pool answered (or a shutdown did): queue its answer.
        case queueDeferred
        /// The event does not fit the state: close the connection.
        case close
    }

    /// The handler was called without data: the body ended, or a suspended request was resumed.
    package mutating func endOfData() -> EndAction {
        switch state {
        case .bodyless:
            state = .handling(reserved: 0)
            return .answerWithoutBody
        case .receiving(let body):
            state = .handling(reserved: body.reserved)
            return .answerWithBody
        case .draining(let drain):
            switch drain.outcome {
            case .early(let early):
                state = .answered(Answered(corked: false, reserved: drain.reserved))
                return .answer(early)
            case .handleAtEnd:
                state = .handling(reserved: drain.reserved)
                return .answerWithoutBody
            }
        case .parked(let reserved):
            state = .handling(reserved: reserved)
            return .askAgain
        case .deferred(let reserved):
            state = .handling(reserved: reserved)
            return .queueDeferred
        default:
            return illegal(.close)
        }
    }

    // MARK: Answer

    /// What the handler's answer asks of the connection.
    package enum Outcome: Equatable, Sendable {
        /// An answer was queued (`corked`: the socket was corked for its file).
        case queued(corked: Bool)
        /// No answer yet: the connection is suspended until woken.
        case parked
        /// The answer is computed on the work pool: suspended until it is there.
        case deferred
    }

    /// The handler (or a prepared answer) answered, or the daemon queued a decided answer.
    package mutating func answered(_ outcome: Outcome) {
        let reserved: Int
        switch state {
        case .handling(let held): reserved = held
        case .answered(let answered): reserved = answered.reserved
        default: return
        }
        switch outcome {
        case .queued(let corked): state = .answered(Answered(corked: corked, reserved: reserved))
        case .parked: state = .parked(reserved: reserved)
        case .deferred: state = .deferred(reserved: reserved)
        }
    }

    // MARK: Completion

    /// What is left to undo when a request ends.
    package struct Completion: Equatable, Sendable {
        /// Uncork the socket.
        package var uncork = false
        /// Bytes to give back to the in-flight budget.
        package var releaseReserved = 0
        /// The request was suspended when it ended (its client went away): forget its suspension.
        package var wasSuspended = false
        /// The request ended before any answer was decided for it: its client went away mid-body
        /// or while parked. (A deferred request's answer is decided by the work pool, which the
        /// responder counts there, delivered or not.)
        package var abandoned = false
    }

    /// libmicrohttpd reports the request done (answered, or its connection closed): back to idle.
    package mutating func completed() -> Completion {
        var completion = Completion()
        switch state {
        case .idle:
            break
        case .bodyless, .admitting:
            completion.abandoned = true
        case .receiving(let body):
            completion.releaseReserved = body.reserved
            completion.abandoned = true
        case .draining(let drain):
            completion.releaseReserved = drain.reserved
            completion.abandoned = true
        case .handling(let reserved):
            completion.releaseReserved = reserved
            completion.abandoned = true
        case .parked(let reserved):
            completion.releaseReserved = reserved
            completion.wasSuspended = true
            completion.abandoned = true
        case .deferred(let reserved):
            completion.releaseReserved = reserved
            completion.wasSuspended = true
        case .answered(let answered):
            completion.uncork = answered.corked
            completion.releaseReserved = answered.reserved
        }
        state = .idle
        startNanos = 0
        return completion
    }

    // MARK: Illegal events

    /// Events that did not fit the state (each answered `close`).
    package private(set) var illegalEvents = 0

    /// Records an event that does not fit the state; the daemon closes the connection on the
    /// `close` it returns rather than guess what the request meant.
    private mutating func illegal<Action>(_ action: Action) -> Action {
        illegalEvents += 1
        return action
    }
}

extension RequestStateMachine.HeadAction: Equatable where Answer: Equatable {}
extension RequestStateMachine.AdmitAction: Equatable where Answer: Equatable {}
extension RequestStateMachine.ChunkAction: Equatable where Answer: Equatable {}
extension RequestStateMachine.EndAction: Equatable where Answer: Equatable {}
extension RequestStateMachine: Sendable where Answer: Sendable {}
