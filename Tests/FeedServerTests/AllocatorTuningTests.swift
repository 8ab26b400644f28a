import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// Large blocks are given back to the system when freed: the server's memory returns to about
/// where it was once the feeds that took it are read and deleted (glibc alone kept 130–190 MiB).
@Suite struct AllocatorTuningTests {
    /// The server's resident memory, from /proc.
    private static func residentMiB(_ pid: Int32) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    /// The sanitizers' runtimes bring allocators of their own (glibc's settings do not apply).
    @Test(.enabled(if: !underAddressSanitizer && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil))
    func memoryTakenByLargeFeedsIsGivenBackOnceTheyAreDeleted() throws {
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path + "/data", "--access-log", "off"])
        let client = HTTPTestClient(port: try child.waitForPort())
        let pid = child.process.processIdentifier
        #expect(try client.get("/healthz").status == 200)
        let idle = Self.residentMiB(pid)
        for index in 0..<6 {
            let body = "[\"\(index)\",\"" + String(repeating: "x", count: 4 << 20) + "\"]"
            #expect(try client.put("/feeds/g\(index)", json: body).status == 201)
            #expect(try client.get("/feeds/g\(index)").status == 200)
        }
        for index in 0..<6 { #expect(try client.request("DELETE", "/feeds/g\(index)").status == 204) }
        let after = Self.residentMiB(pid)
        #expect(after < idle + 40, "resident \(idle) MiB idle, \(after) MiB after the feeds were deleted")
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    /// glibc's thread arenas in a process. Each arena's memory comes in 64 MiB-aligned heaps, and
    /// an arena's first heap begins with a header whose first word is the arena's address, which
    /// lies just past that header (`heap_info.ar_ptr`; later heaps point back to the first). So:
    /// every 64 MiB boundary inside an anonymous mapping is read from /proc/<pid>/mem, and those
    /// whose first word points a few bytes further on are counted, one per arena. Mappings that
    /// merely end on a boundary, and an arena's second heap, are not.
    private static func threadArenas(_ pid: Int32) -> Int {
        let memory = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard memory >= 0 else { return -1 }
        defer { close(memory) }
        return heapBoundaries(pid).filter { base in
            var first: UInt = 0
            let count = withUnsafeMutableBytes(of: &first) { pread(memory, $0.baseAddress, $0.count, off_t(base)) }
            return count == MemoryLayout<UInt>.size && first > base && first - base < 256
        }.count
    }

    /// The 64 MiB boundaries inside anonymous read-write mappings: where glibc's heaps can begin.
    private static func heapBoundaries(_ pid: Int32) -> [UInt] {
        let maps = (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? ""
        let heapBytes: UInt = 64 << 20
        var boundaries: [UInt] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, fields[1] == "rw-p" else { continue }  // anonymous, readable
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2 else { continue }
            boundaries += stride(
                from: (bounds[0] + heapBytes - 1) & ~(heapBytes - 1), to: bounds[1], by: Int(heapBytes))
        }
        return boundaries
    }

    /// The thread arenas a server is left with after one publish of six photos, decoded on many
    /// threads.
    private static func arenasAfterPhotoPublish(environment: [String: String] = [:]) throws -> Int {
        let scratch = ScratchDirectory()
        let child = try ChildServer(
            arguments: ["--port", "0", "--root", scratch.path + "/data", "--access-log", "off"],
            environment: environment)
        let client = HTTPTestClient(port: try child.waitForPort())
        var body = MultipartBody()
        body.field("payload", "[1]", contentType: "application/json")
        for index in 0..<6 {
            body.file("p\(index)", filename: "p\(index).jpg", try TestImages.jpeg(width: 1800, height: 1200 + index))
        }
        #expect(try client.putMultipart("/feeds/g", body).status == 201)
        let arenas = threadArenas(child.process.processIdentifier)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        return arenas
    }

    /// Images decoded on many threads leave no more arenas than cores, the main one included (by
    /// default glibc allowed eight per core: one photo publish left 15).
    @Test(.enabled(if: !underAddressSanitizer && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil))
    func imagesDecodedOnManyThreadsLeaveNoMoreArenasThanCores() throws {
        let arenas = try Self.arenasAfterPhotoPublish()
        #expect(arenas >= 1 && arenas <= Int(AllocatorTuning.arenaLimit) - 1, "\(arenas) thread arenas")
    }

    /// The count above can fail: with glibc's own limit set higher, the same publish leaves more.
    @Test(.enabled(if: !underAddressSanitizer && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil))
    func withTheLimitLiftedTheSamePublishLeavesMoreArenas() throws {
        let arenas = try Self.arenasAfterPhotoPublish(environment: ["MALLOC_ARENA_MAX": "64"])
        #expect(arenas > Int(AllocatorTuning.arenaLimit), "\(arenas) thread arenas")
    }
}
