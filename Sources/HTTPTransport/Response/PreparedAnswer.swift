import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The head of a bodyless request as libmicrohttpd parsed it, read in place: nothing is copied
/// or allocated to look at it.
package struct RequestHead {
    /// The method as sent (`GET`, `HEAD`, ...).
    package let method: UnsafePointer<CChar>
    /// The path as sent, still percent-encoded, without the query.
    package let path: UnsafePointer<CChar>
    /// The first `If-None-Match` as sent (nil: none), in place: valid during the handler call only.
    package let ifNoneMatch: UnsafePointer<CChar>?
    /// Whether the request has a query string with at least one parameter.
    package let hasQuery: Bool
    /// The first `Origin` as sent (nil: none), in place: an answer may have to name it (CORS).
    package let origin: UnsafePointer<CChar>?

    /// A head read in place (the daemon's), or given (tests).
    package init(
        method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, ifNoneMatch: UnsafePointer<CChar>?, hasQuery: Bool,
        origin: UnsafePointer<CChar>? = nil
    ) {
        self.method = method
        self.path = path
        self.ifNoneMatch = ifNoneMatch
        self.hasQuery = hasQuery
        self.origin = origin
    }

    /// The path's bytes, in place.
    package var pathBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(path).assumingMemoryBound(to: UInt8.self), count: strlen(path))
    }

    /// Whether the method is `GET` (compared byte by byte: it runs on every cached read).
    package var isGET: Bool { method[0] == 0x47 && method[1] == 0x45 && method[2] == 0x54 && method[3] == 0 }

    /// Whether the method is `HEAD`.
    package var isHEAD: Bool {
        method[0] == 0x48 && method[1] == 0x45 && method[2] == 0x41 && method[3] == 0x44 && method[4] == 0
    }

    /// Whether the method is exactly `name` (`strcmp` on the bytes as sent).
    package func methodIs(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { wanted in
            wanted.baseAddress!.withMemoryRebound(to: CChar.self, capacity: wanted.count + 1) {
                strcmp(method, $0) == 0
            }
        }
    }
}

/// An answer that is the same for every request that gets it, already built as one shared
/// `MHD_Response` (a cached read's `200` or `304`).
package struct PreparedAnswer {
    /// The owner of `handle`, held until the handle is queued: a publish may drop the cache entry
    /// that held it meanwhile, and its last release destroys the `MHD_Response`.
    package let owner: PreparedResponse
    /// The shared libmicrohttpd response.
    package let handle: OpaquePointer
    /// Its status code.
    package let status: Int
    /// Body bytes it sends to a `GET`, for metrics and the access log.
    package let bodyBytes: Int
    /// An answer prepared as `owner`'s `handle`.
    package init(owner: PreparedResponse, handle: OpaquePointer, status: Int, bodyBytes: Int, sendsFile: Bool = false) {
        self.owner = owner
        self.handle = handle
        self.status = status
        self.bodyBytes = bodyBytes
        self.sendsFile = sendsFile
    }

    /// Whether it sends a file's bytes (an asset to a `GET`): the daemon corks the socket until
    /// the answer is complete, so the header leaves with the file's first bytes.
    package var sendsFile = false
}
