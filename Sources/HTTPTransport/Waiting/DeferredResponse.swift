import ConcurrencyPrimitives

/// An answer computed elsewhere (on the work pool) while the connection is suspended; the
/// daemon queues it when the connection is resumed. The first completion wins, so a shutdown
/// can answer 503 for a job that has not finished, and the job's late answer is dropped.
package final class DeferredResponse: Sendable {
    /// Resumes the connection once an answer is there.
    package let suspension = Suspension()
    private let result = Lock<HTTPResponse?>(nil)

    /// An answer not computed yet.
    package init() {}

    /// Sets the answer (if none was set yet) and resumes the connection.
    package func complete(_ response: HTTPResponse) {
        let first = result.withLock { result -> Bool in
            guard result == nil else { return false }
            result = response
            return true
        }
        if first { suspension.wake() }
    }

    /// The answer, once completed.
    package var response: HTTPResponse? { result.withLock { $0 } }
}
