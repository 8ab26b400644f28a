// The states a request moves through, apart from the transitions that move it (RequestStateMachine.swift).

extension RequestStateMachine {
    /// Where the request is.
    package enum State {
        /// No request yet, or the last one completed: waiting for a head.
        case idle
        /// A head without a body: answered on the next handler call.
        case bodyless
        /// A head with a body, waiting for the responder's admission.
        case admitting(Admitting)
        /// An admitted body arriving into its sink.
        case receiving(Receiving)
        /// A body read and dropped as it arrives; the answer comes at its end.
        case draining(Draining)
        /// The handler (or a prepared answer) is being asked.
        case handling(reserved: Int)
        /// Suspended until woken (a long-poll); the handler is asked again then.
        case parked(reserved: Int)
        /// Suspended until the work pool has the answer.
        case deferred(reserved: Int)
        /// An answer is queued; the completion callback ends the request.
        case answered(Answered)
    }

    /// A head with a body, before its admission.
    package struct Admitting: Equatable, Sendable {
        /// The declared `Content-Length` (nil: chunked).
        package var declaredLength: Int?
        /// Whether the client waits for `100 Continue` before sending the body.
        package var expectsContinue: Bool
    }

    /// A body being received.
    package struct Receiving: Equatable, Sendable {
        /// The most bytes it may have.
        package var limit: Int
        /// Bytes received so far.
        package var received: Int
        /// Bytes counted against the in-flight budget.
        package var reserved: Int
    }

    /// A body being read and dropped.
    package struct Draining {
        /// What is answered when it ends: an answer decided already, or the handler's.
        package var outcome: DrainOutcome
        /// Bytes dropped so far.
        package var dropped: Int
        /// Bytes still counted against the in-flight budget (released at completion).
        package var reserved: Int
    }

    /// What a drained body ends with.
    package enum DrainOutcome {
        /// This answer, decided before the body ended.
        case early(Early)
        /// The route takes no body: the request is answered as if it had none.
        case handleAtEnd
    }

    /// An answer decided by the transport or by the responder's admission.
    package enum Early {
        /// One the transport refuses itself; the responder renders it.
        case refusal(TransportRefusal)
        /// The responder's own.
        case answer(Answer)
    }

    /// A queued answer.
    package struct Answered: Equatable, Sendable {
        /// Whether the socket was corked for it (a file): uncorked at completion.
        package var corked: Bool
        /// Bytes counted against the in-flight budget (released at completion).
        package var reserved: Int
    }
}

extension RequestStateMachine.Early: Equatable where Answer: Equatable {}
extension RequestStateMachine.DrainOutcome: Equatable where Answer: Equatable {}
extension RequestStateMachine.Draining: Equatable where Answer: Equatable {}
extension RequestStateMachine.State: Equatable where Answer: Equatable {}
extension RequestStateMachine.State: Sendable where Answer: Sendable {}
extension RequestStateMachine.Draining: Sendable where Answer: Sendable {}
extension RequestStateMachine.DrainOutcome: Sendable where Answer: Sendable {}
extension RequestStateMachine.Early: Sendable where Answer: Sendable {}
