import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `struct MHD_Response`: created from our response model, headers added, queued, then
/// released (`MHD_destroy_response` in deinit; libmicrohttpd keeps its own reference for every
/// connection it is queued on, until that connection has sent it).
final class MHDResponse {
    let handle: OpaquePointer

    /// Builds the libmicrohttpd response for `response` plus `extraHeaders`; nil when it cannot.
    /// `statesLength` false sends a `.lengthOnly` body as `Content-Length: 0` (`--not-modified-length zero`).
    init?(_ response: HTTPResponse, extraHeaders: [(String, String)] = [], statesLength: Bool = true) {
        guard let created = Self.create(response, extraHeaders: extraHeaders, statesLength: statesLength) else {
            return nil
        }
        handle = created
    }

    /// A new `MHD_Response` (reference count 1, owned by the caller) with the body and headers.
    static func create(_ response: HTTPResponse, extraHeaders: [(String, String)], statesLength: Bool) -> OpaquePointer?
    {
        let created: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            created = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .shared(let shared):
            created = sharedResponse(shared)
        case .lengthOnly(let length):
            // libmicrohttpd states `total_size` as `Content-Length` whenever a status may carry
            // length headers, and sends no body on a 304 or to a HEAD; it never calls the
            // reader here (if it ever did, the reader ends the response with an error).
            created = MHD_create_response_from_callback(
                statesLength ? UInt64(max(0, length)) : 0, 1024, refuseBodyRead, nil, nil)
        case .file(let file):
            let size = file.size
            let fd = file.takeDescriptor()
            guard fd >= 0 else { return nil }
            created = MHD_create_response_from_fd(size, fd)
            if created == nil { close(fd) }
        case .sharedFile(let file):
            let fd = file.duplicateDescriptor()
            guard fd >= 0 else { return nil }
            created = MHD_create_response_from_fd(file.size, fd)
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
        return created
    }

    /// Zero-copy: libmicrohttpd reads the shared bytes in place and calls back when the last
    /// reference to the response is gone, which releases the reference taken here.
    private static func sharedResponse(_ shared: SharedBody) -> OpaquePointer? {
        let retained = Unmanaged.passRetained(shared).toOpaque()
        let created = shared.bytes.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer_with_free_callback_cls(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), releaseSharedBody, retained)
        }
        if created == nil { Unmanaged<SharedBody>.fromOpaque(retained).release() }
        return created
    }

    deinit { MHD_destroy_response(handle) }
}

/// One `MHD_Response` built on first use and then queued on every connection that sends the same
/// answer (libmicrohttpd counts the references of a response and may queue it any number of
/// times, from any thread): a cached read allocates nothing for its answer.
///
/// Whoever holds it promises that every `HTTPResponse` carrying it has the same status, body and
/// headers once the pipeline has decorated it (the pipeline drops it from an answer that gets a
/// header of its request's own, such as an `Access-Control-Allow-Origin` naming its origin). As a
/// guard, a response whose header count differs from the one it was built with is built per
/// request instead.
package final class PreparedResponse: Sendable {
    private let built = Atomic<UInt>(0)
    private let headerCount = Atomic<Int>(-1)

    /// Which version of the resource it carries, told to `HTTPResponder.answered`.
    package let served: ServedVersion?

    /// A response not built yet, carrying `served`.
    package init(served: ServedVersion? = nil) { self.served = served }

    /// The shared handle for `response` (built now if this is its first use), or nil when this
    /// response must be built per request.
    package func handle(for response: HTTPResponse, statesLength: Bool) -> OpaquePointer? {
        let existing = built.load(ordering: .acquiring)
        if existing != 0 {
            return headerCount.load(ordering: .relaxed) == response.headers.count
                ? OpaquePointer(bitPattern: existing) : nil
        }
        guard let made = MHDResponse.create(response, extraHeaders: [], statesLength: statesLength) else { return nil }
        headerCount.store(response.headers.count, ordering: .relaxed)
        let (won, current) = built.compareExchange(
            expected: 0, desired: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(made))),
            ordering: .acquiringAndReleasing)
        guard won else {
            // Another thread built it first: use theirs.
            MHD_destroy_response(made)
            return OpaquePointer(bitPattern: current)
        }
        return made
    }

    /// The shared handle once a request has built it (with the pipeline's decorations), else nil.
    package var existingHandle: OpaquePointer? { OpaquePointer(bitPattern: built.load(ordering: .acquiring)) }

    deinit {
        if let handle = OpaquePointer(bitPattern: built.load(ordering: .acquiring)) { MHD_destroy_response(handle) }
    }
}

private let releaseSharedBody: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<SharedBody>.fromOpaque(context).release()
}

/// The reader of a `.lengthOnly` response, which has no body to read.
private let refuseBodyRead: MHD_ContentReaderCallback = { _, _, _, _ in
    // MHD_CONTENT_READER_END_WITH_ERROR (a macro Swift does not import).
    -2
}
