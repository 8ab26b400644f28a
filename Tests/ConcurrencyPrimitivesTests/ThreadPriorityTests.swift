import Foundation
import Testing

@testable import ConcurrencyPrimitives

/// Lowered work runs in Linux's idle class on a thread of its own; the caller keeps its priority.
@Suite struct ThreadPriorityTests {
    @Test func loweredWorkRunsInTheIdleClassOnANamedThreadAndItsChildrenInheritIt() throws {
        let seen = try ThreadPriority.runLowered(name: "test-lowered") { () -> [String] in
            let child = Lock<(policy: Int32, name: String)?>(nil)
            try? DetachedThread.start { child.withLock { $0 = (sched_getscheduler(0), currentThreadName()) } }
            while child.withLock({ $0 }) == nil { usleep(1_000) }
            let started = child.withLock { $0 }
            return [
                "\(sched_getscheduler(0))", currentThreadName(), "\(started?.policy ?? -1)", started?.name ?? "",
            ]
        }
        #expect(seen == ["5", "test-lowered", "5", "test-lowered"], "SCHED_IDLE, named, inherited")
        #expect(sched_getscheduler(0) == 0, "the caller stays SCHED_OTHER")
    }

    @Test func aThreadCarriesTheNameItWasStartedWithAndLinuxKeepsFifteenBytes() throws {
        let names = Lock<[String]>([])
        let done = DispatchSemaphore(value: 0)
        for name in ["feed-test", "feed-a-name-longer-than-fifteen"] {
            try DetachedThread.start(name: name) {
                names.withLock { $0.append(currentThreadName()) }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
        }
        #expect(names.withLock { $0 } == ["feed-test", "feed-a-name-lon"])
    }
}

/// The calling thread's name, as `top -H` shows it.
func currentThreadName() -> String {
    let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return text.trimmingCharacters(in: .newlines)
}
