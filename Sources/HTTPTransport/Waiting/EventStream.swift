import CMicroHTTPD
import ConcurrencyPrimitives

/// A response body that is written over time (Server-Sent Events), without holding a thread:
/// libmicrohttpd pulls bytes through a content reader (`MHD_create_response_from_callback`);
/// when there is nothing to send, the reader suspends the connection, and `send` resumes it.
///
/// Retained by the libmicrohttpd response (released by its free callback) and by whoever feeds it.
package final class EventStream: @unchecked Sendable {
    private struct State {
        var pending: [UInt8] = []
        var closing = false
        var suspended = false
        /// Set by the free callback: the response (and its connection) is gone.
        var finished = false
        var connection: ConnectionHandle?
    }

    private let state = Lock(State())

    /// A stream with nothing queued yet.
    package init() {}

    /// Queues bytes and resumes the connection if it was waiting for them; no-op once finished.
    package func send(_ bytes: [UInt8]) {
        let connection = state.withLock { state -> ConnectionHandle? in
            guard !state.finished, !state.closing else { return nil }
            state.pending.append(contentsOf: bytes)
            return takeSuspended(&state)
        }
        if let connection { MHD_resume_connection(connection.pointer) }
    }

    /// Ends the stream after what is queued (shutdown); the client sees a clean end of stream.
    package func close() {
        let connection = state.withLock { state -> ConnectionHandle? in
            guard !state.finished else { return nil }
            state.closing = true
            return takeSuspended(&state)
        }
        if let connection { MHD_resume_connection(connection.pointer) }
    }

    /// Whether the response is gone (the client left or the stream ended).
    package var isFinished: Bool { state.withLock { $0.finished } }

    /// Called when the response is queued on `connection`.
    func attach(_ connection: OpaquePointer) { state.withLock { $0.connection = ConnectionHandle(connection) } }

    /// libmicrohttpd forbids resuming a connection that is not suspended: only the caller that
    /// flips `suspended` back may resume it.
    private func takeSuspended(_ state: inout State) -> ConnectionHandle? {
        guard state.suspended, let connection = state.connection else { return nil }
        state.suspended = false
        return connection
    }

    /// The content reader: copies queued bytes, ends the stream when closing, or suspends.
    fileprivate func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        state.withLock { state -> Int in
            if !state.pending.isEmpty {
                let count = min(max, state.pending.count)
                state.pending.withUnsafeBytes { source in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress!, byteCount: count)
                }
                state.pending.removeFirst(count)
                return count
            }
            if state.closing { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
            // Allowed from a content reader; returning 0 while suspended is the documented way
            // to say "nothing yet" without libmicrohttpd polling again.
            if let connection = state.connection {
                MHD_suspend_connection(connection.pointer)
                state.suspended = true
            }
            return 0
        }
    }

    fileprivate func finish() { state.withLock { $0.finished = true } }

    /// Builds the libmicrohttpd response that reads from this stream (chunked, size unknown).
    func makeResponse() -> OpaquePointer? {
        let retained = Unmanaged.passRetained(self).toOpaque()
        guard
            let response = MHD_create_response_from_callback(
                UInt64.max, 1024, readEventStream, retained, finishEventStream)
        else {
            Unmanaged<EventStream>.fromOpaque(retained).release()
            return nil
        }
        return response
    }
}

private let readEventStream: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -1 }
    return Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

private let finishEventStream: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let stream = Unmanaged<EventStream>.fromOpaque(cls)
    stream.takeUnretainedValue().finish()
    stream.release()
}
