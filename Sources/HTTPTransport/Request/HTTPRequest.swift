/// One HTTP request as the router sees it: method, still-encoded path, decoded query, headers, body.
package struct HTTPRequest: Sendable {
    /// `GET`, `PUT`, ... as sent.
    package var method: String
    /// The path as received, still percent-encoded (decoded once per segment by the router).
    package var rawPath: String
    /// Query parameters, percent-decoded; the first value wins for repeated names.
    package var query: RequestFields
    /// Header fields.
    package var headers: RequestFields
    /// The request body (empty for most reads and for multipart bodies).
    package var body: [UInt8]
    /// The parts of a `multipart/form-data` body (parsed by `MHD_PostProcessor`); nil otherwise.
    package var parts: [MultipartPart]?
    /// The folder the parts' files are in; kept alive (so the files exist) as long as the request.
    package var uploads: (any UploadFolderHandle)?
    /// True when the handler is asked again after the request was suspended and woken.
    package var resumed = false
    /// The body as a file in `uploads`, for media types the daemon spools (`BodySpool`); the
    /// body is then not in `body`.
    package var bodyFile: StoredUpload? = nil
    /// What heard of a multipart body's parts as they arrived (`BodyAdmission.accept`).
    package var partObserver: (any MultipartPartObserver)? = nil
    /// The client's IP address, for requests that change something (a journal records it);
    /// nil for reads, which never pay for it.
    package var clientAddress: String? = nil

    /// A request as the transport builds it.
    package init(
        method: String, rawPath: String, query: RequestFields, headers: RequestFields, body: [UInt8] = [],
        parts: [MultipartPart]? = nil, uploads: (any UploadFolderHandle)? = nil, bodyFile: StoredUpload? = nil
    ) {
        self.method = method
        self.rawPath = rawPath
        self.query = query
        self.headers = headers
        self.body = body
        self.parts = parts
        self.uploads = uploads
        self.bodyFile = bodyFile
    }

    /// A copy whose fields stay valid after the handler call (for the work pool).
    package func detached() -> HTTPRequest {
        var copy = self
        copy.query = query.detached()
        copy.headers = headers.detached()
        return copy
    }

    /// `Content-Type` without parameters, lowercased (`application/json; charset=utf-8` → `application/json`).
    package var mediaType: String? {
        headers["Content-Type"].map(MediaType.essence)
    }
}
