import Foundation
import Synchronization
import Testing

@testable import ConcurrencyPrimitives

/// Lowered work runs ten nice levels down on a thread of its own, the caller keeps its priority;
/// threads started under short slices keep them, their starter gets its own back.
@Suite struct ThreadPriorityTests {
    @Test func loweredWorkRunsTenNiceLevelsDownOnANamedThreadAndItsChildrenInheritIt() throws {
        let callerNice = currentNice()
        let seen = try ThreadPriority.runLowered(name: "test-lowered") { () -> [String] in
            let child = Lock<(nice: Int32, name: String)?>(nil)
            try? DetachedThread.start { child.withLock { $0 = (currentNice(), currentThreadName()) } }
            while child.withLock({ $0 }) == nil { usleep(1_000) }
            let started = child.withLock { $0 }
            return [
                "\(sched_getscheduler(0))", "\(currentNice())", currentThreadName(), "\(started?.nice ?? -100)",
                started?.name ?? "",
            ]
        }
        let lowered = "\(min(19, callerNice + 10))"
        #expect(seen == ["0", lowered, "test-lowered", lowered, "test-lowered"], "SCHED_OTHER, +10, named, inherited")
        #expect(currentNice() == callerNice, "the caller keeps its nice value")
    }

    /// A thread still winding down when the caller goes on would run its thread-local destructors
    /// (OpenSSL frees a thread's error state in one) after the process may have started to exit.
    @Test func loweredWorkReturnsOnlyOnceItsThreadHasRunItsThreadLocalDestructors() throws {
        var key = pthread_key_t()
        try #require(
            pthread_key_create(&key) { value in
                guard let value else { return }
                Unmanaged<EndFlag>.fromOpaque(value).takeRetainedValue().ended.store(true, ordering: .releasing)
            } == 0)
        defer { pthread_key_delete(key) }
        for round in 0..<50 {
            let flag = EndFlag()
            try ThreadPriority.runLowered(name: "test-ends") { [key] in
                _ = pthread_setspecific(key, Unmanaged.passRetained(flag).toOpaque())
            }
            let ended = flag.ended.load(ordering: .acquiring)
            #expect(ended, "round \(round): the destructor had not run")
        }
    }

    @Test func threadsStartedUnderShortSlicesKeepThemAndTheStarterGetsItsOwnBack() throws {
        let before = ThreadPriority.currentSliceNanoseconds
        let inside = Lock<UInt64?>(nil)
        ThreadPriority.startingThreadsWithShortSlices(microseconds: 150) {
            try? DetachedThread.start { inside.withLock { $0 = ThreadPriority.currentSliceNanoseconds } }
        }
        #expect(ThreadPriority.currentSliceNanoseconds == before, "the starter's slice is restored")
        while inside.withLock({ $0 }) == nil { usleep(1_000) }
        let started = try #require(inside.withLock { $0 })
        // Kernels before 6.12 have no per-thread slice and report 0.
        #expect(before == 0 || started == 150_000, "inherited: \(started) ns, the default \(before) ns")
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

/// Set by a thread-local destructor when the thread that held it ends.
final class EndFlag: Sendable {
    let ended = Atomic<Bool>(false)
}

/// The calling thread's name, as `top -H` shows it.
func currentThreadName() -> String {
    let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return text.trimmingCharacters(in: .newlines)
}

/// The calling thread's nice value (per thread on Linux).
func currentNice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
