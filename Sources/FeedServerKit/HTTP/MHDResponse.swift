import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `struct MHD_Response` for one request: created from our response model, headers
/// added, queued, then released (`MHD_destroy_response` in deinit; libmicrohttpd keeps its own
/// reference until the response is sent).
final class MHDResponse {
    let handle: OpaquePointer

    /// Builds the libmicrohttpd response for `response` plus `extraHeaders`; nil when it cannot.
    init?(_ response: HTTPResponse, extraHeaders: [(String, String)]) {
        let created: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            created = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .shared(let shared):
            // Zero-copy: libmicrohttpd reads the shared bytes in place and calls back when done,
            // which releases the reference taken here.
            let retained = Unmanaged.passRetained(shared).toOpaque()
            created = shared.bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer_with_free_callback_cls(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), releaseSharedBody, retained)
            }
            if created == nil { Unmanaged<SharedBody>.fromOpaque(retained).release() }
        case .file(let file):
            let size = file.size
            let fd = file.takeDescriptor()
            created = MHD_create_response_from_fd(size, fd)
            if created == nil { close(fd) }
        case .stream(let stream):
            created = stream.makeResponse()
        case .suspend, .deferred:
            return nil
        }
        guard let created else { return nil }
        for headers in [response.headers, extraHeaders] {
            for (name, value) in headers where MHD_add_response_header(created, name, value) != mhdYes {
                MHD_destroy_response(created)
                return nil
            }
        }
        handle = created
    }

    deinit { MHD_destroy_response(handle) }
}

private let releaseSharedBody: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<SharedBody>.fromOpaque(context).release()
}
