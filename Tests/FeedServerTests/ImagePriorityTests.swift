import ConcurrencyPrimitives
import FeedImaging
import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A photo publish prepares its images on threads of their own, ten nice levels down, while the
/// work pool's threads, which write and flush, keep the server's priority (so a busy machine does
/// not starve a publish), and libmicrohttpd's threads have short time slices. Seen from
/// `/proc/self/task` during a real publish.
@Suite struct ImagePriorityTests {
    /// With the payload last nothing is prefetched and the pack decodes every image; with it
    /// first, the upload's prefetch thread (started from libmicrohttpd's) decodes as parts arrive.
    @Test(arguments: [false, true])
    func imagesArePreparedTenNiceLevelsDownAndThePoolKeepsTheServersPriority(payloadFirst: Bool) throws {
        let own = try #require(ThreadSample.current())
        try withTestServer { _, client in
            var body = MultipartBody()
            if payloadFirst { body.field("payload", #"{"photos":6}"#, contentType: "application/json") }
            for index in 0..<6 {
                body.file("p\(index)", filename: "p\(index).jpg", try TestImages.jpeg(width: 4000, height: 3000))
            }
            if !payloadFirst { body.field("payload", #"{"photos":6}"#, contentType: "application/json") }
            let sampler = ThreadSampler()
            try sampler.start()
            let published = try client.putMultipart("/feeds/photos", body)
            let seen = sampler.stop()
            #expect(published.status == 201, "\(published.text)")
            let name = payloadFirst ? "feed-prefetch" : VipsImageEncoder.threadName
            let lowered = seen.filter { $0.name == name }
            #expect(!lowered.isEmpty, "no \(name) thread seen in \(Set(seen.map(\.name)))")
            // Ten nice levels down, with the default slice (not the transport's short one).
            let expected = ThreadSample(name: name, policy: 0, priority: min(139, own.priority + 10), slice: own.slice)
            #expect(lowered.allSatisfy { $0 == expected }, "\(lowered)")
            let pool = seen.filter { $0.name == "feed-pool" }
            #expect(!pool.isEmpty && pool.allSatisfy { $0.policy == 0 && $0.priority == own.priority }, "\(pool)")
            let transport = seen.filter { $0.name == "MHD-worker" }
            #expect(!transport.isEmpty)
            // Kernels before 6.12 have no per-thread slice.
            let slices = ThreadPriority.currentSliceNanoseconds != 0
            #expect(!slices || transport.allSatisfy { $0.slice == 100_000 }, "\(transport)")
        }
    }
}

/// One thread's name and scheduling, from `/proc/self/task/<tid>/{comm,sched}`.
private struct ThreadSample: Hashable, Sendable {
    let name: String
    let policy: Int
    /// 120 + nice for the fair scheduler.
    let priority: Int
    /// `se.slice` in nanoseconds, where the kernel shows it.
    let slice: Int?

    static func current() -> ThreadSample? { read(folder: "/proc/thread-self") }

    static func read(folder: String) -> ThreadSample? {
        guard let comm = try? String(contentsOfFile: folder + "/comm", encoding: .utf8),
            let sched = try? String(contentsOfFile: folder + "/sched", encoding: .utf8)
        else { return nil }  // the thread ended meanwhile
        var fields: [String: Int] = [:]
        for line in sched.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            fields[parts[0].trimmingCharacters(in: .whitespaces)] = value
        }
        guard let policy = fields["policy"], let priority = fields["prio"] else { return nil }
        return ThreadSample(
            name: comm.trimmingCharacters(in: .newlines), policy: policy, priority: priority, slice: fields["se.slice"])
    }
}

/// Polls this process's threads on a thread of its own.
private final class ThreadSampler: Sendable {
    private let state = Lock<(running: Bool, seen: Set<ThreadSample>)>((true, []))
    private let ended = DispatchSemaphore(value: 0)

    func start() throws {
        try DetachedThread.start(name: "test-sampler") { [self] in
            while state.withLock({ $0.running }) {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                let samples = tasks.compactMap { ThreadSample.read(folder: "/proc/self/task/\($0)") }
                state.withLock { $0.seen.formUnion(samples) }
                usleep(500)
            }
            ended.signal()
        }
    }

    func stop() -> Set<ThreadSample> {
        state.withLock { $0.running = false }
        _ = ended.wait(timeout: .now() + 10)
        return state.withLock { $0.seen }
    }
}
