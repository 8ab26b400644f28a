import FeedStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `close` funnel: one call, whatever it reports.
@Suite struct SyscallTests {
    /// `EINTR` from `close` is success and is never retried: the descriptor is already released
    /// on Linux, and a retry could close one another thread was just given.
    @Test func anInterruptedCloseIsNotRetriedAndNotAnError() throws {
        var calls = 0
        try Syscall.close(7, "feed.json") { descriptor in
            #expect(descriptor == 7)
            calls += 1
            guard calls == 1 else { return 0 }  // a retry would "succeed" here, and be counted
            errno = EINTR
            return -1
        }
        #expect(calls == 1, "close was called again after EINTR")
    }

    /// Any other failure is a `FileSystemError` naming `close` (a deferred write error), after
    /// one call.
    @Test func aFailedCloseIsReportedOnce() {
        var calls = 0
        #expect(throws: FileSystemError(operation: "close", path: "feed.json", errno: EIO)) {
            try Syscall.close(7, "feed.json") { _ in
                calls += 1
                errno = EIO
                return -1
            }
        }
        #expect(calls == 1)
    }

    /// A real descriptor is closed: the write end of a pipe, so its reader sees the end of the
    /// stream (checking the number itself could race with another test reusing it).
    @Test func theDescriptorIsClosed() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        // Close-on-exec: a child another test spawns meanwhile would hold the write end open.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(ends[0]) }
        try Syscall.close(ends[1], "pipe")
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0, "end of stream: the only writer is closed")
    }
}
