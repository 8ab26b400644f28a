import ConcurrencyPrimitives
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// A handler run on the work pool: what it defers (`AfterAnswer.run`, as a publish wakes its
/// long-polls) runs once the request's answer is complete, not while the handler runs.
@Suite struct OffloadedAnswerTests {
    @Test func whatAHandlerDefersRunsOnceItsAnswerIsComplete() throws {
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let handed = Lock<DeferredResponse?>(nil)
        let seen = Lock<[String]>([])
        let testHoldsTheAnswer = DispatchSemaphore(value: 0)
        let deferredRan = DispatchSemaphore(value: 0)
        let route = Route(
            "/slow",
            methods: [
                "PUT": { _ in
                    testHoldsTheAnswer.wait()
                    AfterAnswer.run {
                        let answered = handed.withLock { $0?.response != nil }
                        seen.withLock { $0.append(answered ? "after the answer" : "before the answer") }
                        deferredRan.signal()
                    }
                    seen.withLock { $0.append("handler returns") }
                    return HTTPResponse(status: 201)
                }
            ], offloaded: ["PUT"])
        let pipeline = RequestPipeline(
            router: Router(routes: [route]), authorization: Authorization(writeToken: nil, readToken: nil),
            cors: nil, caching: .shared, metrics: Metrics(), pool: pool)
        let request = HTTPRequest(
            method: "PUT", rawPath: "/slow", query: RequestFields(given: [], kind: .GET_ARGUMENT_KIND),
            headers: RequestFields(given: [], kind: .HEADER_KIND))
        guard case .deferred(let deferred) = pipeline.respond(to: request).body else {
            Issue.record("an offloaded handler's answer is deferred")
            return
        }
        handed.withLock { $0 = deferred }
        testHoldsTheAnswer.signal()
        #expect(deferredRan.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == ["handler returns", "after the answer"])
        #expect(deferred.response?.status == 201)
    }
}
