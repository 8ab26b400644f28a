import CMicroHTTPD
import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One handler call: feeds the event to the connection's state machine and performs the action
/// it returns (ask the responder, open or feed the sink, queue, park, defer).
struct RequestDriver {
    // Unowned: the context outlives every callback (`HTTPDaemon` keeps it until the daemon has
    // stopped), and a handler call need not retain and release it.
    unowned(unsafe) let context: DaemonContext
    let connection: OpaquePointer
    let method: UnsafePointer<CChar>
    let url: UnsafePointer<CChar>

    private typealias Machine = ConnectionState.Machine

    // MARK: Events

    /// The head has arrived.
    func head(_ state: ConnectionState, queryRefused: Bool) -> MHD_Result {
        context.inFlight.add(1, ordering: .relaxed)
        state.method = method
        var head = CMicroHTTPD_RequestHead()
        CMicroHTTPD_read_head(connection, &head)
        var facts = HeadFacts(head, shuttingDown: context.closing.load(ordering: .acquiring))
        facts.queryRefused = queryRefused
        if context.log.isEnabled { state.logStartNanos = MonotonicClock.nanos() }
        let now = facts.carriesBody ? MonotonicClock.coarseNanos() : 0
        switch state.machine.receivedHead(facts, now: now) {
        case .awaitAnswer:
            state.watch(.answering)
            return mhdYes
        case .answer(let early):
            state.watch(.answering)
            return queue(early, state)
        case .admit(let declaredLength):
            state.watch(.receivingBody(since: now))
            return admit(state, declaredLength: declaredLength, contentType: head.content_type)
        case .close:
            return mhdNo
        }
    }

    /// A piece of the body has arrived.
    func body(_ state: ConnectionState, _ data: UnsafePointer<CChar>, _ size: Int) -> MHD_Result {
        state.watch?.phase.withLock { $0 = $0.adding(size) }
        switch state.machine.received(size, now: MonotonicClock.coarseNanos(), budget: context.budget) {
        case .store:
            switch state.sink {
            case .buffer: keepInMemory(state, data, size)
            case .multipart(let collector): feedParts(state, collector, data, size)
            case .spool(let spool): spool.feed(data, count: size)
            case .none: break
            }
            return mhdYes
        case .drop:
            return mhdYes
        case .closeSinkAndDrop:
            dropKeptBody(state)
            return mhdYes
        case .answer(let early):
            // Past the drain's bounds: answered now; libmicrohttpd closes the connection after it.
            return queue(early, state)
        case .close:
            return mhdNo
        }
    }

    /// Appends a piece of a body kept whole, counted against the memory budget as it arrives (a
    /// declared length costs nothing until sent): past the budget the body is dropped and the
    /// request refused with 503, so bodies in memory stay bounded in total, not only each.
    private func keepInMemory(_ state: ConnectionState, _ data: UnsafePointer<CChar>, _ size: Int) {
        let cost = TransportSettings.memoryCost(ofBodyBytes: size)
        guard context.memoryBudget.reserve(cost) else {
            state.machine.sinkFailed(.memoryLimit(context.memoryBudget.limit))
            dropKeptBody(state)
            return
        }
        state.memoryHeld += cost
        state.buffer.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
    }

    /// Feeds a piece to the multipart collector. A part refused (past the memory budget, too many
    /// parts, malformed) ends the collection at once: the collector goes, with the parts it kept
    /// and the memory budget they held, and the rest of the body is drained, then refused.
    private func feedParts(
        _ state: ConnectionState, _ collector: MultipartCollector, _ data: UnsafePointer<CChar>, _ size: Int
    ) {
        collector.feed(data, count: size)
        guard let refusal = collector.refusal else { return }
        state.machine.sinkFailed(refusal)
        dropKeptBody(state)
    }

    /// Lets go of a body no longer wanted: the sink (a collector gives back the memory its parts
    /// held as it goes), the buffer and the memory budget it held, now rather than when the
    /// request ends, so a refused client that stays connected holds nothing.
    private func dropKeptBody(_ state: ConnectionState) {
        state.sink = .none
        state.buffer = []
        context.memoryBudget.release(state.memoryHeld)
        state.memoryHeld = 0
    }

    /// The handler's call without data: the body has ended, or a suspended request was resumed.
    func endOfData(_ state: ConnectionState) -> MHD_Result {
        if case .receiving = state.machine.state { state.watch(.answering) }
        if case .draining = state.machine.state { state.watch(.answering) }
        switch state.machine.endOfData() {
        case .answerWithoutBody:
            if let prepared = preparedAnswer(state) { return prepared }
            return handle(request(parts: isMultipart(contentType()) ? [] : nil), state)
        case .answerWithBody:
            return answerWithBody(state)
        case .answer(let early):
            return queue(early, state)
        case .askAgain:
            context.suspended.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(state)) }
            guard var request = state.parked else { return mhdNo }
            state.parked = nil
            state.suspension = nil
            request.resumed = true
            request.query = RequestFields(connection: connection, kind: .GET_ARGUMENT_KIND)
            request.headers = RequestFields(connection: connection, kind: .HEADER_KIND)
            return handle(request, state)
        case .queueDeferred:
            context.deferred.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(state)) }
            let answer = state.deferred?.response
            state.deferred = nil
            guard let answer else {
                return queue(refusal(.shuttingDown(started: true)), state)
            }
            // The pool's answer may itself be to wait (a long-poll read off the disk).
            return dispatch(answer, for: request(), state)
        case .close:
            return mhdNo
        }
    }

    // MARK: Admission and the body's sink

    private func admit(_ state: ConnectionState, declaredLength: Int?, contentType: UnsafePointer<CChar>?) -> MHD_Result
    {
        let maxBody = context.settings.maxBodyBytes
        let admission: Machine.Admission
        var accepted = maxBody
        var observer: (any MultipartPartObserver)?
        switch context.responder.admitBody(request(), declaredLength: declaredLength) {
        case .accept(let limit, let parts):
            accepted = min(limit ?? maxBody, maxBody)
            observer = parts
            admission = .accept(limit: accepted)
        case .refuse(let answer): admission = .refuse(BoxedAnswer(answer))
        case .discard: admission = .discard
        }
        switch state.machine.admitted(admission, budget: context.budget) {
        case .answer(let early):
            return queue(early, state)
        case .drain:
            return mhdYes
        case .receive:
            openSink(
                state, contentType: contentType, expecting: declaredLength.map { min($0, accepted) }, observer: observer
            )
            return mhdYes
        case .close:
            return mhdNo
        }
    }

    /// Multipart bodies stream into parts, archives into a file, anything else into memory: a
    /// buffer of the declared length (within the route's limit), so a body kept whole never
    /// regrows (a 16 MiB body read into a doubling array ended in 32 MiB of it). Its pages are
    /// mapped as the bytes arrive: a length declared and not sent costs address space, not memory.
    private func openSink(
        _ state: ConnectionState, contentType: UnsafePointer<CChar>?, expecting length: Int?,
        observer: (any MultipartPartObserver)?
    ) {
        if isMultipart(contentType) {
            state.sink = .multipart(
                MultipartCollector(
                    connection: connection, maxParts: context.settings.maxParts,
                    maxMemoryPartBytes: context.settings.maxMemoryPartBytes, memoryBudget: context.memoryBudget,
                    storage: context.uploads, observer: observer))
            return
        }
        guard let uploads = context.uploads, let type = mediaType(contentType), BodySpool.mediaTypes.contains(type)
        else {
            state.sink = .buffer
            if let length, length > 0 { state.buffer.reserveCapacity(length) }
            return
        }
        do throws(UploadStorageError) {
            state.sink = .spool(try BodySpool(storage: uploads))
        } catch {
            state.machine.sinkFailed(.uploadNotStored(reason: error.reason))
        }
    }

    private func answerWithBody(_ state: ConnectionState) -> MHD_Result {
        let sink = state.sink
        state.sink = .none
        do throws(TransportRefusal) {
            switch sink {
            case .multipart(let collector):
                state.memoryHeld += collector.takeMemoryReservation()
                var request = request(parts: try collector.finish(), uploads: collector.folder)
                request.partObserver = collector.observer
                return handle(request, state)
            case .spool(let spool):
                return handle(request(bodyFile: try spool.finish(), uploads: spool.folder), state)
            case .buffer:
                let body = state.buffer
                state.buffer = []
                return handle(request(body: body), state)
            case .none:
                return handle(request(), state)
            }
        } catch {
            return queue(.refusal(error), state)
        }
    }

    // MARK: Answers

    /// Asks the responder and queues, parks or defers what it answers.
    private func handle(_ request: HTTPRequest, _ state: ConnectionState) -> MHD_Result {
        dispatch(context.responder.respond(to: request), for: request, state)
    }

    /// Queues `response`, or parks or defers the request when it says so.
    private func dispatch(_ response: HTTPResponse, for request: HTTPRequest, _ state: ConnectionState) -> MHD_Result {
        switch response.body {
        case .deferred(let deferred):
            state.deferred = deferred
            state.machine.answered(.deferred)
            let waiting = DaemonContext.WaitingForPool(answer: deferred, method: request.method)
            context.deferred.withLock { $0[ObjectIdentifier(state)] = waiting }
            suspend(until: deferred.suspension)
            return mhdYes
        case .suspend(let suspension):
            state.suspension = suspension
            state.parked = request
            state.machine.answered(.parked)
            context.suspended.withLock { $0[ObjectIdentifier(state)] = suspension }
            suspend(until: suspension)
            return mhdYes
        default:
            return queue(response, state)
        }
    }

    /// Suspends the connection; `suspension` resumes it when woken (from any thread).
    private func suspend(until suspension: Suspension) {
        MHD_suspend_connection(connection)
        let resumable = ConnectionHandle(connection)
        suspension.suspended { MHD_resume_connection(resumable.pointer) }
    }

    /// A cached read answered from its prepared `MHD_Response` (nil: the responder declined, or
    /// the answer needs a header of its own for this request).
    private func preparedAnswer(_ state: ConnectionState) -> MHD_Result? {
        guard !context.closing.load(ordering: .acquiring) else { return nil }
        // Read again: a bodyless request keeps nothing between its calls, and one pass over a
        // few fields costs less than the state that would keep it.
        var fields = CMicroHTTPD_RequestHead()
        CMicroHTTPD_read_head(connection, &fields)
        guard RequestID.sane(fields.request_id) == nil else { return nil }
        let head = RequestHead(
            method: method, path: url, ifNoneMatch: fields.if_none_match, hasQuery: fields.has_query != 0,
            origin: fields.origin)
        guard let answer = context.responder.preparedAnswer(head) else { return nil }
        let corked = corkForFile(answer.sendsFile)
        // libmicrohttpd takes its own reference while queueing; until then the owner keeps it alive.
        let queued = withExtendedLifetime(answer.owner) {
            MHD_queue_response(connection, UInt32(answer.status), answer.handle)
        }
        state.machine.answered(.queued(corked: corked))
        record(
            status: answer.status, bytes: answer.bodyBytes, state: state, clientRequestID: nil,
            served: answer.owner.served)
        return queued
    }

    private func queue(_ early: Machine.Early, _ state: ConnectionState) -> MHD_Result {
        switch early {
        case .refusal(let refusal): return queue(self.refusal(refusal), state)
        case .answer(let answer): return queue(answer.response, state)
        }
    }

    /// Queues `response`: its prepared handle when it has one and nothing is added per request,
    /// else a response built for this request (with its `X-Request-Id`, or `Connection: close`).
    private func queue(_ response: HTTPResponse, _ state: ConnectionState) -> MHD_Result {
        let clientID = state.clientRequestID(connection)
        if case .stream(let stream) = response.body { stream.attach(connection) }
        let corked = corkForFile(response.sendsFile && strcmp(method, "HEAD") != 0)
        let closing = context.closing.load(ordering: .acquiring)
        let statesLength = context.settings.notModifiedStatesLength
        let queued: MHD_Result
        if clientID == nil, !closing,
            let prepared = response.prepared?.handle(for: response, statesLength: statesLength)
        {
            // The same answer for every request (a cached read): no allocation at all.
            queued = MHD_queue_response(connection, UInt32(response.status), prepared)
        } else {
            var extraHeaders = clientID.map { [("X-Request-Id", $0)] } ?? []
            if closing { extraHeaders.append(("Connection", "close")) }
            guard let built = MHDResponse(response, extraHeaders: extraHeaders, statesLength: statesLength) else {
                return mhdNo
            }
            queued = MHD_queue_response(connection, UInt32(response.status), built.handle)
        }
        state.machine.answered(.queued(corked: corked))
        record(
            status: response.status, bytes: response.bodyByteCount, state: state, clientRequestID: clientID,
            served: response.served ?? response.prepared?.served)
        return queued
    }

    /// Corks the socket for an answer that sends a file (`CMicroHTTPD_set_cork`), so its header
    /// leaves with the file's first bytes; whether it did (the completion callback uncorks).
    private func corkForFile(_ sendsFile: Bool) -> Bool {
        sendsFile && CMicroHTTPD_set_cork(connection, 1) != 0
    }

    /// Tells the responder (its request history) and the access log that an answer was queued.
    private func record(
        status: Int, bytes: Int, state: ConnectionState, clientRequestID: String?, served: ServedVersion?
    ) {
        context.responder.answered(
            AnsweredRequest(
                method: method, path: url, status: status, client: CMicroHTTPD_client_sockaddr(connection),
                served: served))
        guard context.log.isEnabled else { return }
        context.log.record(
            method: method, path: url, status: status, bytes: bytes,
            elapsedNanos: MonotonicClock.nanos() - state.logStartNanos, clientRequestID: clientRequestID)
    }

    // MARK: The request model

    private var methodName: String { String(cString: method) }

    /// The responder's answer to a refusal of ours, told the request's `Origin` while its head is here.
    private func refusal(_ refusal: TransportRefusal) -> HTTPResponse {
        let origin = MHD_lookup_connection_value(connection, .HEADER_KIND, "Origin").map { String(cString: $0) }
        return context.responder.respond(to: refusal, method: methodName, origin: origin)
    }

    /// The request as the responder sees it; its fields are read in place, valid during this call.
    private func request(
        body: [UInt8] = [], parts: [MultipartPart]? = nil, bodyFile: StoredUpload? = nil,
        uploads: (any UploadFolderHandle)? = nil
    ) -> HTTPRequest {
        var request = HTTPRequest(
            method: methodName, rawPath: String(cString: url),
            query: RequestFields(connection: connection, kind: .GET_ARGUMENT_KIND),
            headers: RequestFields(connection: connection, kind: .HEADER_KIND), body: body, parts: parts,
            uploads: uploads, bodyFile: bodyFile)
        if request.method != "GET", request.method != "HEAD" { request.clientAddress = clientAddress() }
        return request
    }

    /// The peer's address as text (`127.0.0.1`, `::1`), nil when libmicrohttpd has none.
    private func clientAddress() -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard CMicroHTTPD_client_address(connection, &buffer, buffer.count) != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func contentType() -> UnsafePointer<CChar>? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Type")
    }

    private func isMultipart(_ contentType: UnsafePointer<CChar>?) -> Bool {
        guard let contentType else { return false }
        return String(cString: contentType).lowercased().hasPrefix("multipart/form-data")
    }

    /// `Content-Type` without parameters, lowercased.
    private func mediaType(_ contentType: UnsafePointer<CChar>?) -> String? {
        guard let contentType else { return nil }
        let count = strlen(contentType)
        return contentType.withMemoryRebound(to: UInt8.self, capacity: count) {
            MediaType.essence(bytes: UnsafeBufferPointer(start: $0, count: count))
        }
    }
}
