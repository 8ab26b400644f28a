import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// Owns one `struct MHD_Response` (created with `MHD_create_response_from_buffer`, freed with
/// `MHD_destroy_response` in deinit) so a cached read can be queued on many connections without copying.
///
/// libmicrohttpd reference-counts responses internally and locks that count, so queuing one
/// response from several worker threads at once is supported; its headers never change after init.
final class PreparedResponse: @unchecked Sendable {
    let handle: OpaquePointer
    /// Status code it is queued with.
    let status: Int
    /// Body size.
    let byteCount: Int

    /// Builds the response; returns nil when libmicrohttpd cannot allocate it.
    init?(status: Int, headers: [(String, String)], body: [UInt8]) {
        let created = body.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        guard let created else { return nil }
        for (name, value) in headers where MHD_add_response_header(created, name, value) != mhdYes {
            MHD_destroy_response(created)
            return nil
        }
        handle = created
        self.status = status
        byteCount = body.count
    }

    /// Builds a response that sends a file from its descriptor (`MHD_create_response_from_fd`);
    /// libmicrohttpd owns and closes the descriptor from then on.
    init?(status: Int, headers: [(String, String)], fileDescriptor: Int32, size: Int) {
        guard let created = MHD_create_response_from_fd(size, fileDescriptor) else {
            close(fileDescriptor)
            return nil
        }
        for (name, value) in headers where MHD_add_response_header(created, name, value) != mhdYes {
            MHD_destroy_response(created)
            return nil
        }
        handle = created
        self.status = status
        byteCount = size
    }

    deinit { MHD_destroy_response(handle) }
}
