/// Streams a request body that a route reads as one file (a tar archive, maybe gzip-compressed) into
/// the upload storage as it arrives, instead of keeping it in memory.
///
/// Used only from the connection's handler thread, one call at a time.
final class BodySpool {
    /// Media types whose bodies are spooled.
    static let mediaTypes: Set<String> = ["application/x-tar", "application/gzip", "application/x-gzip"]

    /// The request's upload folder; it lives as long as the request that holds it.
    let folder: any UploadFolderHandle
    private var file: (any UploadFileWriter)?
    /// Set when the body could not be written; the request is then refused with it.
    private(set) var refusal: TransportRefusal?

    /// A spool in a new folder of `storage`.
    init(storage: any UploadStorage) throws(UploadStorageError) {
        folder = try storage.makeFolder()
        file = try folder.makeFile()
    }

    /// Appends one chunk of the body.
    func feed(_ data: UnsafePointer<CChar>, count: Int) {
        guard refusal == nil, let file else { return }
        do throws(UploadStorageError) {
            try file.append(UnsafeRawBufferPointer(start: data, count: count))
        } catch {
            self.file = nil
            refusal = .uploadNotStored(reason: error.reason)
        }
    }

    /// Ends the body: the file it was written to.
    func finish() throws(TransportRefusal) -> StoredUpload {
        if let refusal { throw refusal }
        guard let file else { throw TransportRefusal.uploadNotStored(reason: "closed") }
        self.file = nil
        do throws(UploadStorageError) { return try file.finish() } catch {
            throw TransportRefusal.uploadNotStored(reason: error.reason)
        }
    }
}
