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
}
