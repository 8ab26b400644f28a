import ConcurrencyPrimitives

/// A request parked without a thread (`MHD_suspend_connection`) until something wakes it.
///
/// libmicrohttpd forbids resuming a connection that is not suspended, and a wake-up can race
/// with the suspension itself, so the order is kept here: a wake that comes first is remembered
/// and resumes the connection the moment it is suspended.
package final class Suspension: Sendable {
    private enum State {
        case pending
        case suspended(resume: @Sendable () -> Void)
        case wokenEarly
        case resumed
    }

    private let state = Lock(State.pending)

    /// A suspension not started yet.
    package init() {}

    /// Called by the daemon right after `MHD_suspend_connection`, with how to resume it.
    package func suspended(resume: @escaping @Sendable () -> Void) {
        let resumeNow = state.withLock { state -> Bool in
            if case .wokenEarly = state {
                state = .resumed
                return true
            }
            state = .suspended(resume: resume)
            return false
        }
        if resumeNow { resume() }
    }

    /// Resumes the request (once); safe from any thread, at any time.
    package func wake() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            switch state {
            case .pending:
                state = .wokenEarly
                return nil
            case .suspended(let resume):
                state = .resumed
                return resume
            case .wokenEarly, .resumed:
                return nil
            }
        }
        resume?()
    }
}

/// A connection handle that may cross threads for `MHD_resume_connection`, which libmicrohttpd
/// allows from any thread (the daemon has an inter-thread channel, `MHD_USE_ITC`).
package struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
