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

    /// A real descriptor is closed: using it afterwards fails with `EBADF`.
    @Test func theDescriptorIsClosed() throws {
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        try Syscall.close(fd, "/dev/null")
        #expect(fcntl(fd, F_GETFD) == -1 && errno == EBADF)
    }
}
