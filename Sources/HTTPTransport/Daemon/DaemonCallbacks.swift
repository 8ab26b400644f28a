import CMicroHTTPD
import ConcurrencyPrimitives

/// libmicrohttpd's C callbacks: thin adapters that find the connection's `ConnectionState` and
/// hand the call to `RequestDriver`, which feeds the request's state machine.
enum DaemonCallbacks {
    /// Called for a request's head (its slot still empty), for each piece of its body, and once
    /// without data when the body has ended or a suspended request was resumed.
    static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, _, uploadData, uploadSize, requestSlot in
        guard let cls, let connection, let url, let method, let uploadSize, let requestSlot else { return mhdNo }
        // Guaranteed references: the daemon keeps its context and the connection its state
        // alive for the whole call, so neither is retained for it.
        return Unmanaged<DaemonContext>.fromOpaque(cls)._withUnsafeGuaranteedRef { context in
            let call = RequestDriver(context: context, connection: connection, method: method, url: url)
            guard let slot = requestSlot.pointee, !CMicroHTTPD_query_refused(slot) else {
                // A new request (its slot empty, or holding the shim's mark of a refused query):
                // its slot points at the connection's state until it completes.
                let queryRefused = requestSlot.pointee != nil
                guard let raw = CMicroHTTPD_connection_context(connection) else { return mhdNo }
                requestSlot.pointee = raw
                return Unmanaged<ConnectionState>.fromOpaque(raw)._withUnsafeGuaranteedRef {
                    call.head($0, queryRefused: queryRefused)
                }
            }
            return Unmanaged<ConnectionState>.fromOpaque(slot)._withUnsafeGuaranteedRef { state in
                let size = uploadSize.pointee
                guard size > 0 else { return call.endOfData(state) }
                uploadSize.pointee = 0
                guard let uploadData else { return mhdYes }
                return call.body(state, uploadData, size)
            }
        }
    }

    /// Called once a request is done: answered, or its connection closed (a client that went
    /// away while parked ends here without another handler call).
    static let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestSlot, _ in
        guard let cls, let requestSlot, let slot = requestSlot.pointee else { return }
        requestSlot.pointee = nil
        // A refused query's mark, on a request that never reached the handler (its head was too
        // large): no state of ours.
        if CMicroHTTPD_query_refused(slot) { return }
        Unmanaged<DaemonContext>.fromOpaque(cls)._withUnsafeGuaranteedRef { context in
            Unmanaged<ConnectionState>.fromOpaque(slot)._withUnsafeGuaranteedRef { state in
                complete(state, context: context, connection: connection)
            }
        }
    }

    /// Undoes what a finished request held and readies the connection for its next head.
    private static func complete(_ state: ConnectionState, context: DaemonContext, connection: OpaquePointer?) {
        let completion = state.machine.completed()
        if completion.uncork, let connection { _ = CMicroHTTPD_set_cork(connection, 0) }
        context.budget.release(completion.releaseReserved)
        context.memoryBudget.release(state.memoryHeld)
        if completion.wasSuspended {
            let key = ObjectIdentifier(state)
            context.suspended.withLock { _ = $0.removeValue(forKey: key) }
            context.deferred.withLock { _ = $0.removeValue(forKey: key) }
        }
        if completion.abandoned, let method = state.method {
            context.responder.requestAbandoned(method: String(cString: method))
        }
        state.reset()
        // A keep-alive connection now waits for its next request head (a deadline in seconds).
        if state.watch != nil { state.watch(.awaitingHead(sinceNanos: MonotonicClock.coarseNanos())) }
        context.inFlight.subtract(1, ordering: .relaxed)
    }

    /// Makes a connection's state when libmicrohttpd accepts it (retained in its slot) and drops
    /// it when the connection closes, after the last request's completion.
    static let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, slot, code in
        guard let cls, let connection, let slot else { return }
        let context = Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
        switch code {
        case .CONNECTION_NOTIFY_STARTED:
            let watch = context.watchdog?.opened(fd: CMicroHTTPD_connection_fd(connection))
            slot.pointee = Unmanaged.passRetained(ConnectionState(watch: watch)).toOpaque()
        case .CONNECTION_NOTIFY_CLOSED:
            guard let raw = slot.pointee else { return }
            let state = Unmanaged<ConnectionState>.fromOpaque(raw)
            if let watch = state.takeUnretainedValue().watch { context.watchdog?.closed(watch) }
            state.release()
            slot.pointee = nil
        default:
            break
        }
    }
}
