#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file a response sends (`MHD_create_response_from_fd`). Owns its descriptor (closed in
/// deinit) until `takeDescriptor()` hands it to libmicrohttpd, which closes it.
package final class ResponseFile: @unchecked Sendable {
    // Only the thread that made it uses it until the descriptor is taken; a shared file (held by
    // a cache) is only ever duplicated, which any thread may do.
    private var descriptor: Int32
    /// Its size in bytes: what is sent.
    package let size: Int

    /// Takes ownership of `descriptor`, a regular file of `size` bytes.
    package init(takingDescriptor descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = max(0, size)
    }

    /// Gives the descriptor away; this object no longer closes it.
    package func takeDescriptor() -> Int32 {
        defer { descriptor = -1 }
        return descriptor
    }

    /// A new descriptor for the same open file (`F_DUPFD_CLOEXEC`), owned by the caller; -1 when
    /// it fails or the descriptor was taken. Several owners can send the file at once: each reads
    /// at its own offset (`sendfile`), never through the shared file position.
    package func duplicateDescriptor() -> Int32 {
        descriptor >= 0 ? fcntl(descriptor, F_DUPFD_CLOEXEC, 0) : -1
    }

    deinit {
        // Never retried: on Linux the descriptor is released even when close reports EINTR.
        if descriptor >= 0 { close(descriptor) }
    }
}
