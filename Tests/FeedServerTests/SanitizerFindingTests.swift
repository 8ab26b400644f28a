@testable import FeedServerKit
import Foundation
import Synchronization
import Testing

/// Defects the sanitizer runs (scripts/sanitizers.sh) found; see docs/testing.md.
@Suite struct SanitizerFindingTests {
    private final class Token: Sendable {}

    /// LeakSanitizer: every feed-server process leaked its whole server at exit. A started job
    /// stayed in the work pool's queue, and the job (through the pipeline it captured) held the pool.
    @Test func aStartedJobNoLongerHoldsWhatItCaptured() throws {
        let pool = WorkPool(threads: 1, queueLimit: 4)
        defer { pool.stop() }
        weak var observed: Token?
        let ran = Atomic<Bool>(false)
        do {
            let token = Token()
            observed = token
            #expect(pool.submit { withExtendedLifetime(token) { ran.store(true, ordering: .sequentiallyConsistent) } })
        }
        try waitUntil { ran.load(ordering: .sequentiallyConsistent) }
        try waitUntil(seconds: 2) { observed == nil }
    }
}
