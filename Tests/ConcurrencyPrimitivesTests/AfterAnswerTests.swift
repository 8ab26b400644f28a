import Foundation
import Testing

@testable import ConcurrencyPrimitives

/// What a job defers runs on its thread once the job has returned, in order; outside a job, at once.
@Suite struct AfterAnswerTests {
    /// A log kept on one thread (the tests below never share it across threads).
    private final class Log {
        var lines: [String] = []
    }

    @Test func outsideAScopeAnActionRunsAtOnce() {
        let log = Log()
        #expect(!AfterAnswer.isCollecting)
        AfterAnswer.run { log.lines.append("ran") }
        #expect(log.lines == ["ran"])
    }

    @Test func insideAScopeActionsRunAfterTheBodyInTheOrderDeferred() {
        let log = Log()
        let result = AfterAnswer.collecting { () -> Int in
            #expect(AfterAnswer.isCollecting)
            AfterAnswer.run { log.lines.append("first") }
            AfterAnswer.run { log.lines.append("second") }
            log.lines.append("answered")
            return 7
        }
        #expect(result == 7)
        #expect(log.lines == ["answered", "first", "second"])
        #expect(!AfterAnswer.isCollecting, "the scope ends with its call")
    }

    @Test func aNestedScopeRunsItsOwnActionsWhenItEnds() {
        let log = Log()
        AfterAnswer.collecting {
            AfterAnswer.run { log.lines.append("outer") }
            AfterAnswer.collecting {
                AfterAnswer.run { log.lines.append("inner") }
            }
            log.lines.append("outer body ends")
        }
        #expect(log.lines == ["inner", "outer body ends", "outer"])
    }

    @Test func anActionThatDefersInTurnRunsThatAtOnce() {
        let log = Log()
        AfterAnswer.collecting {
            AfterAnswer.run {
                log.lines.append("deferred")
                AfterAnswer.run { log.lines.append("deferred by the deferred") }
            }
        }
        #expect(log.lines == ["deferred", "deferred by the deferred"])
    }

    @Test func scopesBelongToTheirThread() throws {
        // A pool thread outside any scope runs at once, even while this thread collects.
        let pool = try WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        let ranOnPool = DispatchSemaphore(value: 0)
        AfterAnswer.collecting {
            #expect(pool.submit { AfterAnswer.run { ranOnPool.signal() } })
            #expect(ranOnPool.wait(timeout: .now() + 10) == .success, "not held by another thread's scope")
        }
    }
}
