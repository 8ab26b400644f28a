import FeedArchive
import FeedStore
import HTTPTransport

/// A request's upload folder as the archive unpacker's asset spool: a restore's assets are
/// streamed to files that go with the request, as a multipart publish's parts are.
struct UploadFolderSpool: AssetSpool {
    /// The request's folder; its files go with it.
    let folder: any UploadFolderHandle

    func makeFile() throws(AssetSpoolError) -> any AssetSpoolFile {
        do { return File(try folder.makeFile()) } catch { throw AssetSpoolError(error) }
    }

    /// One asset's file of the folder.
    private final class File: AssetSpoolFile {
        private let file: any UploadFileWriter

        init(_ file: any UploadFileWriter) { self.file = file }

        func append(_ bytes: UnsafeRawBufferPointer) throws(AssetSpoolError) {
            do { try file.append(bytes) } catch { throw AssetSpoolError(error) }
        }

        func finish() throws(AssetSpoolError) -> AssetSource {
            do { return .file(try file.finish().uploadedFile) } catch { throw AssetSpoolError(error) }
        }
    }
}

extension AssetSpoolError {
    /// The transport's words for why an upload file failed (its reason never holds a path).
    init(_ error: UploadStorageError) { self.init(reason: error.reason) }
}
