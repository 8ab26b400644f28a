import FeedStore
import HTTPTransport

/// FeedStore's upload area as the transport's upload storage: bodies streamed to disk land in
/// `<root>/.feed-server-uploads/<process>/request-N`, removed when their request is done.
struct StoreUploads: UploadStorage {
    let area: UploadArea

    func makeFolder() throws(UploadStorageError) -> any UploadFolderHandle {
        do { return StoreUploadFolder(try area.makeFolder()) } catch { throw UploadStorageError(error) }
    }
}

/// One request's folder of the upload area.
final class StoreUploadFolder: UploadFolderHandle {
    /// The store's folder (removed with its files when the last reference goes).
    let folder: UploadFolder

    init(_ folder: UploadFolder) { self.folder = folder }

    func makeFile() throws(UploadStorageError) -> any UploadFileWriter {
        do { return StoreUploadFile(try folder.makeFile()) } catch { throw UploadStorageError(error) }
    }
}

/// A file of a request's folder, hashed as it is written.
final class StoreUploadFile: UploadFileWriter {
    private let file: StreamingFile

    init(_ file: StreamingFile) { self.file = file }

    func append(_ bytes: UnsafeRawBufferPointer) throws(UploadStorageError) {
        do { try file.append(bytes) } catch { throw UploadStorageError(error) }
    }

    func finish() throws(UploadStorageError) -> StoredUpload {
        do {
            let finished = try file.finish()
            return StoredUpload(path: finished.path, byteCount: finished.byteCount, sha256: finished.sha256)
        } catch {
            throw UploadStorageError(error)
        }
    }
}

extension UploadStorageError {
    /// The kind of a file-system error (`noSpace`, ...), never its path.
    init(_ error: any Error) {
        self.init(reason: "\((error as? FileSystemError)?.kind ?? .other)")
    }
}

extension StoredUpload {
    /// The same file as the store's asset budget takes it.
    var uploadedFile: UploadedFile { UploadedFile(path: path, byteCount: byteCount, sha256: sha256) }
}

extension MultipartPart {
    /// The part's content wherever it is.
    var source: AssetSource { file.map { .file($0.uploadedFile) } ?? .bytes(bytes) }
}

extension OpenedFile {
    /// The file as a response body; this object gives its descriptor away.
    func responseFile() -> ResponseFile { ResponseFile(takingDescriptor: takeDescriptor(), size: size) }
}
