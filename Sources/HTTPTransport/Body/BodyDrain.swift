/// How much of a refused request's body is read and dropped so that its client, if it sends
/// everything before reading, still reads the answer: at most `maxBytes` within `maxNanos`.
package enum BodyDrain {
    /// Most body bytes dropped for one request.
    package static let maxBytes = 64 << 20
    /// Longest time from the request's head to the end of the drain.
    package static let maxNanos: Int64 = 10_000_000_000

    /// Whether draining may go on after `bytes` were dropped, `elapsedNanos` after the head.
    package static func allows(bytes: Int, elapsedNanos: Int64) -> Bool {
        bytes <= maxBytes && elapsedNanos <= maxNanos
    }
}
