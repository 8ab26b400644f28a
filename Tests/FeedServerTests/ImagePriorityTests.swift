import ConcurrencyPrimitives
import FeedImaging
import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A photo publish prepares its images on threads of their own in Linux's idle class while the
/// work pool's threads, which write and flush, stay at normal priority (so a busy machine does
/// not starve a JSON publish). Seen from `/proc/self/task` during a real publish.
@Suite struct ImagePriorityTests {
    @Test func imagesArePreparedOnIdleClassThreadsAndThePoolStaysNormal() throws {
        try withTestServer { _, client in
            var body = MultipartBody()
            for index in 0..<6 {
                body.file("p\(index)", filename: "p\(index).jpg", try TestImages.jpeg(width: 4000, height: 3000))
            }
            // The payload last: nothing is prefetched, so every image is decoded by the pack.
            body.field("payload", #"{"photos":6}"#, contentType: "application/json")
            let sampler = ThreadSampler()
            try sampler.start()
            let published = try client.putMultipart("/feeds/photos", body)
            let seen = sampler.stop()
            #expect(published.status == 201, "\(published.text)")
            let packers = seen.filter { $0.name == VipsImageEncoder.threadName }
            #expect(!packers.isEmpty, "no image thread seen in \(Set(seen.map(\.name)))")
            #expect(packers.allSatisfy { $0.policy == 5 }, "SCHED_IDLE: \(packers)")
            let pool = seen.filter { $0.name == "feed-pool" }
            #expect(!pool.isEmpty && pool.allSatisfy { $0.policy == 0 }, "SCHED_OTHER: \(pool)")
        }
    }
}

/// Polls this process's threads (name and scheduling policy) on a thread of its own.
private final class ThreadSampler: Sendable {
    struct Sample: Hashable, Sendable {
        let name: String
        let policy: Int32
    }

    private let state = Lock<(running: Bool, seen: Set<Sample>)>((true, []))
    private let ended = DispatchSemaphore(value: 0)

    func start() throws {
        try DetachedThread.start(name: "test-sampler") { [self] in
            while state.withLock({ $0.running }) {
                let samples = Self.sample()
                state.withLock { $0.seen.formUnion(samples) }
                usleep(500)
            }
            ended.signal()
        }
    }

    func stop() -> Set<Sample> {
        state.withLock { $0.running = false }
        _ = ended.wait(timeout: .now() + 10)
        return state.withLock { $0.seen }
    }

    private static func sample() -> Set<Sample> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(
            tasks.compactMap { task -> Sample? in
                guard let tid = Int32(task),
                    let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                else { return nil }
                let policy = sched_getscheduler(tid)
                guard policy >= 0 else { return nil }  // the thread ended meanwhile
                return Sample(name: comm.trimmingCharacters(in: .newlines), policy: policy)
            })
    }
}
